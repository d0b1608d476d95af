import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { loadConfig, silentLogger, type Config } from "@pushstack/config";
import { createBus, type Bus } from "@pushstack/bus";
import { createTestDatabase } from "../db/testing";
import type { Database } from "../db";
import type { CoreContext } from "../context";
import { createCore, type Core } from "../app";
import { createServer } from "@pushstack/http";

/** Status, headers and the body parsed as JSON when it is JSON (as text otherwise): what HTTP tests assert on. */
export async function readResponse(res: Response): Promise<{ status: number; body: any; headers: Headers }> {
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, body: parsed, headers: res.headers };
}

export interface TestCore {
  ctx: CoreContext;
  core: Core;
  database: Database;
  bus: Bus;
  /** Sets the clock every service sees. */
  setNow(d: Date | null): void;
  req(method: string, path: string, opts?: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  /** A fresh account; returns its JWT and id. */
  user(opts?: { plan?: string; admin?: boolean }): Promise<{ token: string; id: number; email: string }>;
  close(): Promise<void>;
}

/**
 * Core as the tests see it: real Elysia routes, a database of its own (PGlite, or PostgreSQL when
 * DATABASE_URL is set), a bus of its own (memory, or NATS JetStream with a unique prefix when NATS_URL is set).
 */
export async function startTestCore(env: Record<string, string> = {}): Promise<TestCore> {
  const prefix = "t" + randomBytes(5).toString("hex");
  const config: Config = loadConfig({
    DATA_DIR: mkdtempSync(join(tmpdir(), "ps-core-")),
    NATS_URL: process.env.NATS_URL ?? "",
    BUS_PREFIX: prefix,
    ...env,
  });
  const database = await createTestDatabase();
  const bus = await createBus({ natsUrl: config.natsUrl, prefix: config.busPrefix });
  let fixed: Date | null = null;
  const ctx: CoreContext = { config, db: database.db, bus, log: silentLogger, now: () => fixed ?? new Date() };
  const core = createCore(ctx);
  await core.start();
  const app = createServer({ log: silentLogger, ready: async () => null }).use(core.routes);
  let n = 0;
  const t: TestCore = {
    ctx,
    core,
    database,
    bus,
    setNow: (d) => (fixed = d),
    async req(method, path, opts = {}) {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) {
        headers["content-type"] ??= "application/json";
        body = JSON.stringify(opts.body);
      }
      const res = await app.handle(new Request(`http://local${path}`, { method, headers, body }));
      return readResponse(res);
    },
    async user(opts = {}) {
      const email = `u${++n}-${randomBytes(3).toString("hex")}@example.com`;
      const r = await t.req("POST", "/api/auth/register", { body: { email, password: "correct horse" } });
      if (r.status !== 201) throw new Error(`register failed: ${r.status} ${JSON.stringify(r.body)}`);
      if (opts.plan || opts.admin) {
        const { users } = await import("@pushstack/schema");
        const { eq } = await import("drizzle-orm");
        await ctx.db.update(users).set({ ...(opts.plan ? { plan: opts.plan } : {}), ...(opts.admin ? { isAdmin: true } : {}) }).where(eq(users.id, r.body.user.id));
      }
      return { token: r.body.token, id: r.body.user.id, email };
    },
    async close() {
      await core.stop();
      await bus.close();
      await database.close();
    },
  };
  return t;
}
