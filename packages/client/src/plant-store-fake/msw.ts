export { plantStoreHandlers } from './msw-handlers.ts';
