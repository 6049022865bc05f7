/**
 * node:http for every module of the service that needs more than its types. An ESM import of
 * node:http makes Node load its bundled fetch (undici) too, for the module's WebSocket export
 * (nodejs/node#57649): ~40 ms of every cold start, measured. getBuiltinModule hands over the same
 * module without that; test/startup-modules.test.ts holds the service to it.
 */
export const http = process.getBuiltinModule('node:http');
