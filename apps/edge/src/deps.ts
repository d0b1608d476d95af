import type { Server } from "bun";
import type { Config, Logger } from "@pushstack/config";
import type { Bus } from "@pushstack/bus";
import type { AppDirectoryEntry, RegisterReply, RegisterRequest } from "@pushstack/schema";
import type { InstanceIds } from "./instance-id";

/** What the edge's routes need; built once by createEdge (see edge.ts). Every method throws AppErrors. */
export interface EdgeDeps {
  config: Config;
  log: Logger;
  now(): Date;
  ids: InstanceIds;
  /** Seconds after which SDKs send their device info again (answered by `PUT .../info`). */
  infoRefreshSec: number;
  /** The app when the directory has it (the hot path: no promise). */
  knownApp(appId: number): AppDirectoryEntry | undefined;
  /** The app or null (404); 503 when an unknown app could not be confirmed with core. */
  findApp(appId: number): Promise<AppDirectoryEntry | null>;
  /** Hands an item to the ingest stream; resolves once stored, else throws 503 (never a silent loss). */
  ingest(item: Record<string, unknown>): Promise<void>;
  /** The client address, after taking one request of its per-IP postback budget (429 past it). */
  limitPostback(request: Request, server: Server<unknown> | null): string;
  /** Takes one request of the app's SDK budget (429 past it). */
  limitSdk(appIdRaw: string): void;
  /** SDK registration, answered by core over the bus; 503 when core cannot be reached. */
  register(req: RegisterRequest): Promise<RegisterReply>;
  /** A country a trusted proxy determined for the client (CF-IPCountry, X-Country-Code), or null. */
  proxyCountry(request: Request, server: Server<unknown> | null): string | null;
}

export type { Bus };
