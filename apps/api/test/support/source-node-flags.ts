/**
 * The V8 flags of every Node process the tests run that starts the service's threads from its
 * TypeScript source: the vitest workers (vitest.config.ts) and the service processes they start
 * (main-process.ts, startup-modules.test.ts, the store's children).
 *
 * Node strips types with amaro, swc compiled to WebAssembly, in every isolate that loads a .ts
 * module: the test process and each SQLite and delivery thread it starts and stops, hundreds of
 * times a file. After 1,000 calls from WebAssembly to one JavaScript import, V8 compiles a
 * wrapper for it (Runtime_TierUpWasmToJSWrapper), and freeing the wrappers that process-wide cache
 * no longer needs faults with several isolates: `Check failed: jit_page.has_value()` or a SIGSEGV
 * in NativeModule::FreeCode, under that same frame, about one full test run in two (0014). With
 * the budget out of reach, imports stay on V8's generic wrapper and none is ever compiled or freed.
 * The built service (dist/, `pnpm start`) loads no TypeScript and runs no WebAssembly.
 */
export const SOURCE_NODE_FLAGS = ['--wasm-wrapper-tiering-budget=2147483647'];
