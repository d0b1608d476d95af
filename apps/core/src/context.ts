import type { Config, Logger } from "@pushstack/config";
import type { Bus } from "@pushstack/bus";
import type { Db } from "./db";

/** Everything a core service needs, passed explicitly: no globals, so tests build their own. */
export interface CoreContext {
  config: Config;
  db: Db;
  bus: Bus;
  log: Logger;
  /** Injected so jobs and tests can run "at" a given instant. */
  now: () => Date;
}

/** Who is calling, resolved once per request from the bearer token. */
export interface Actor {
  userId: number;
  email: string;
  isAdmin: boolean;
  plan: string;
  subscriptionStatus: string;
  via: "jwt" | "api_key";
  /** API key scope: "account" | "app" | "admin"; null for a JWT. */
  keyScope: string | null;
  /** Set when the key reaches one app only. */
  appId: number | null;
}
