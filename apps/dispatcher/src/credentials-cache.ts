import { open } from "@pushstack/config";
import { SendSubjects, type AppCredentialsEntry } from "@pushstack/schema";
import type { Bus, KvBucket, Subscription } from "@pushstack/bus";
import { credentialsFromEntry, type AppCredentials } from "./transports";

/**
 * Credentials per app, from the sealed KV entries core publishes. A watch keeps the cache current; a job
 * that names a newer version than the cache holds reads the bucket again (the watch may lag).
 */
export class CredentialsCache {
  private cache = new Map<number, AppCredentials>();
  private kv: KvBucket | null = null;
  private watch: Subscription | null = null;

  constructor(private readonly bus: Bus, private readonly masterKey: Buffer) {}

  async start() {
    this.kv = await this.bus.kv(SendSubjects.credentialsBucket);
    this.watch = await this.kv.watch((e) => {
      const id = Number(e.key);
      if (e.operation === "DEL") this.cache.delete(id);
      else {
        const c = this.decode(e.value);
        if (c) this.cache.set(id, c);
      }
    });
  }

  async stop() {
    await this.watch?.stop();
  }

  private decode(value: Uint8Array): AppCredentials | null {
    try {
      const entry = JSON.parse(open(this.masterKey, new TextDecoder().decode(value))) as AppCredentialsEntry;
      return credentialsFromEntry(entry);
    } catch {
      return null; // sealed under another key or corrupt: treated as missing
    }
  }

  /** The app's credentials at `minVersion` or newer, or null when the bus has none that recent. */
  async get(appId: number, minVersion: number): Promise<AppCredentials | null> {
    const hit = this.cache.get(appId);
    if (hit && Number(hit.version) >= minVersion) return hit;
    const e = await this.kv!.get(String(appId));
    if (!e) return null;
    const c = this.decode(e.value);
    if (!c) return null;
    this.cache.set(appId, c);
    return Number(c.version) >= minVersion ? c : null;
  }
}
