export * from "./errors";
export { httpBasics, json } from "./http";
export { describeValidation } from "./validation";
export { createServer } from "./server";
