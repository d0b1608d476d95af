export { createCore, type Core } from "./app";
export { startCoreRuntime, exitOnSignal, type CoreRuntime } from "./runtime";
export { openDatabase, ping, type Database, type Db } from "./db";
export type { CoreContext, Actor } from "./context";
