export * from "./tables";
export * from "./plans";
export * from "./models";
export * from "./messages";
export * from "./sending";
