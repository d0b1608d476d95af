import { loadConfig, createLogger, redactConfig } from "@pushstack/config";
import { startCoreRuntime, exitOnSignal } from "@pushstack/core";

/**
 * `bun run start`: edge, core and dispatcher in one process on one port. With no configuration this
 * is the embedded mode (PGlite in DATA_DIR, in-process bus journaled in DATA_DIR); DATABASE_URL and
 * NATS_URL switch the same process to PostgreSQL and NATS JetStream.
 */
const config = loadConfig();
const log = createLogger(config.logLevel, { app: "pushstack" });
log.info("config", { config: redactConfig(config), mode: config.databaseUrl || config.natsUrl ? "external services" : "embedded" });
const runtime = await startCoreRuntime({ config, log });
exitOnSignal(log, runtime.stop);
