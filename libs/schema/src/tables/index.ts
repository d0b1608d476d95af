export * from "./accounts";
export * from "./apps";
export * from "./packs";
export * from "./devices";
