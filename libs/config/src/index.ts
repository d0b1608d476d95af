export { loadConfig, redactConfig, ConfigError, type Config } from "./config";
export { createLogger, silentLogger, type Logger, type LogLevel } from "./logger";
export { seal, open } from "./sealing";
