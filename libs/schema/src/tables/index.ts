export * from "./accounts";
export * from "./apps";
export * from "./packs";
export * from "./devices";
export * from "./billing";
export * from "./events";
export * from "./activity";
export * from "./sending";
