import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { startCoreRuntime, exitOnSignal } from "./runtime";

/** `bun run start:core`: the management API, jobs and consumers; the only owner of PostgreSQL. */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "core" });
log.info("config", { config: redactConfig(config) });
const runtime = await startCoreRuntime({ config, log });
exitOnSignal(log, runtime.stop);
