/**
 * @pushstack/edge — postbacks and the SDK API, without a database. Nothing happens at import:
 * createEdge() builds the routes; start() creates the ingest stream and loads the app directory.
 */
export { createEdge, type Edge, type EdgeOptions } from "./edge";
export { serveEdge } from "./serve";
export { InstanceIds } from "./instance-id";
export { RateLimiter } from "./ratelimit";
export { clientIp, rateKey } from "./clientip";
export { IngestBatcher, IngestOverloaded } from "./batcher";
export { AppDirectory, DirectoryUnavailable } from "./directory";
