/**
 * @pushstack/bus — the message bus: NATS JetStream when NATS_URL is configured, in-process otherwise.
 * Nothing happens at import; a bus exists once createBus()/createNatsBus()/createMemoryBus() is called.
 */
import { createMemoryBus } from "./memory";
import { createNatsBus } from "./nats";
import type { Bus } from "./types";

export type {
  Bus,
  BusMessage,
  ConsumeOptions,
  KvBucket,
  KvEntry,
  MessageHandler,
  PublishAck,
  PublishItem,
  PublishOptions,
  ReplyHandler,
  RequestOptions,
  StreamConfig,
  Subscription,
} from "./types";
export { BusError, BusNoResponders, BusTimeout, BusUnavailable } from "./types";
export { createNatsBus, NatsBus, type NatsBusOptions } from "./nats";
export { createMemoryBus, MemoryBus, type MemoryBusOptions } from "./memory";
export { encodeJson, decodeJson } from "./util";

export interface BusConfig {
  /** A nats:// URL selects NatsBus; null/undefined/"" the in-process bus. */
  natsUrl?: string | null;
  /** Embedded mode: persist streams and KV here (the app's DATA_DIR). */
  dataDir?: string;
  prefix?: string;
  /** Connection name shown by the NATS server, e.g. "pushstack-edge". */
  name?: string;
}

/** The bus the configuration asks for (fits the Config of @pushstack/config). */
export async function createBus(config: BusConfig = {}): Promise<Bus> {
  if (config.natsUrl) return createNatsBus({ url: config.natsUrl, prefix: config.prefix, name: config.name });
  return createMemoryBus({ prefix: config.prefix, dataDir: config.dataDir });
}
