export * from "./common";
export * from "./auth";
export * from "./apps";
export * from "./apikeys";
export * from "./packs";
export * from "./billing";
export * from "./devices";
