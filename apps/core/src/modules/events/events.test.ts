import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { appEventStats, devices, IngestSubjects, type IngestPostback } from "@pushstack/schema";
import { startTestStack, type TestStack } from "../ingest/testing";
import { processItem } from "../ingest/consumer";
import { EventStats, recordEvent } from "../ingest/record";

let s: TestStack;
/** The edge's clock: the instant it stamps on what it accepts (first_at / last_at come from it). */
let edgeNow: Date | null = null;
beforeAll(async () => {
  // the whole file posts from one address: the per-IP postback limit is not under test here
  s = await startTestStack({ POSTBACK_RATE_LIMIT: "100000" }, { now: () => edgeNow ?? new Date() });
});
afterAll(() => s.close());

const events = (appId: number) => `/api/v3/apps/${appId}/events`;
const postback = (appId: number, externalId: string, event: string) =>
  s.call("GET", `/postback?app_id=${appId}&external_id=${encodeURIComponent(externalId)}&event=${encodeURIComponent(event)}`);
/** The whole listing, as one array (pages of `limit`), checking every page is well formed. */
async function listAll(token: string, appId: number, sort?: string, limit = 1000) {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const qs = new URLSearchParams({ limit: String(limit), ...(sort ? { sort } : {}), ...(cursor ? { cursor } : {}) });
    const r = await s.t.req("GET", `${events(appId)}?${qs}`, { token });
    expect(r.status).toBe(200);
    expect(r.body.items.length).toBeLessThanOrEqual(limit);
    out.push(...r.body.items);
    cursor = r.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error("listing did not end");
}
/** code -> [count, devices], for exact comparisons. */
const counts = (items: any[]) => Object.fromEntries(items.map((e) => [e.code, [e.count, e.devices]]));

describe("counters kept by ingest", () => {
  test("postbacks and SDK events: count per code, devices once per code, deposits as numbered, first/last instants", async () => {
    const { app, token } = await s.app();
    const t0 = new Date("2030-01-02T03:04:05.000Z");
    const at = (min: number) => new Date(t0.getTime() + min * 60_000);
    const seq: Array<[string, string]> = [
      ["u1", "install"],
      ["u1", "reg"],
      ["u2", "reg"],
      ["u1", "dep"],
      ["u1", "dep"],
      ["u2", "dep"],
      ["u1", "dep"],
      ["u1", "Lead.ok"],
      ["u1", "Lead.ok"],
      ["u3", "lead.ok"],
    ];
    for (const [i, [user, code]] of seq.entries()) {
      edgeNow = at(i);
      expect((await postback(app.id, user, code)).status).toBe(200);
    }
    // an SDK device reporting a custom event twice and a lifecycle event
    edgeNow = at(20);
    const ic = (await s.call("POST", `/api/v3/apps/${app.id}/instances`, { ic_token: "sdk-1" })).body.id;
    for (const event of ["Lead.ok", "Lead.ok", "onscreen"]) {
      expect((await s.call("POST", `/api/v3/apps/${app.id}/instances/${ic}/events`, { event })).status).toBe(200);
    }
    edgeNow = null;
    await s.settle();

    const list = await s.t.req("GET", events(app.id), { token });
    expect(list.status).toBe(200);
    expect(list.body.next_cursor).toBeNull();
    expect(counts(list.body.items)).toEqual({
      install: [1, 1],
      reg: [2, 2],
      dep: [2, 2], // u1's first and u2's first
      dep2: [1, 1],
      dep3: [1, 1],
      "Lead.ok": [4, 2], // twice on u1, twice on the SDK device
      "lead.ok": [1, 1], // codes are case-sensitive, as ingest records them
      onscreen: [1, 1],
    });
    // sort=count (the default): most recorded first, ties in byte order of the code
    expect(list.body.items.map((e: any) => e.code)).toEqual(["Lead.ok", "dep", "reg", "dep2", "dep3", "install", "lead.ok", "onscreen"]);
    const byCode = Object.fromEntries(list.body.items.map((e: any) => [e.code, e]));
    expect(byCode.reg).toEqual({
      code: "reg",
      name: null,
      description: null,
      builtin: true,
      defined: false,
      count: 2,
      devices: 2,
      first_at: at(1).toISOString(),
      last_at: at(2).toISOString(),
    });
    expect(byCode.dep3).toMatchObject({ builtin: true, first_at: at(6).toISOString(), last_at: at(6).toISOString() });
    expect(byCode["Lead.ok"]).toMatchObject({ builtin: false, defined: false, first_at: at(7).toISOString(), last_at: at(20).toISOString() });
    expect(byCode.onscreen.builtin).toBe(true);

    const one = await s.t.req("GET", `${events(app.id)}/Lead.ok`, { token });
    expect(one).toMatchObject({ status: 200, body: byCode["Lead.ok"] });
    expect((await s.t.req("GET", `${events(app.id)}/purchase`, { token })).status).toBe(404);
  });

  test("a postback reaching several devices of one user counts each device; later deposits number per device", async () => {
    const { app, token } = await s.app();
    // two SDK devices of one user, then a deposit on one of them first
    for (const ic of ["m-1", "m-2"]) expect((await s.call("POST", `/api/v3/apps/${app.id}/instances`, { ic_token: ic, ext_id: "multi" })).status).toBe(200);
    await postback(app.id, "multi", "reg");
    await postback(app.id, "multi", "dep");
    await postback(app.id, "multi", "dep");
    await s.settle();
    expect(counts(await listAll(token, app.id))).toEqual({ reg: [2, 2], dep: [2, 2], dep2: [2, 2] });
  });

  test("a redelivered batch and replayed items count nothing twice", async () => {
    const { app, token } = await s.app();
    const at = new Date().toISOString();
    const item = (id: string, external_id: string, event: string): IngestPostback => ({ kind: "postback", id, at, app_id: app.id, ip: null, method: "GET", external_id, event, tags: {}, params: {} });
    const items = [item("rd-1", "r1", "dep"), item("rd-2", "r1", "dep"), item("rd-3", "r1", "custom"), item("rd-4", "r2", "custom")];
    const body = JSON.stringify({ v: 1, items });
    // the same items under two message ids: both stored, as after a republish past the dedup window
    await s.t.bus.publish(IngestSubjects.batch, body, { msgId: `rd-a-${app.id}` });
    await s.t.bus.publish(IngestSubjects.batch, body, { msgId: `rd-b-${app.id}` });
    await s.settle();
    // and each item once more, straight into the consumer
    for (const it of items) await processItem(s.t.ctx, it);
    expect(counts(await listAll(token, app.id))).toEqual({ dep: [1, 1], dep2: [1, 1], custom: [2, 2] });
  });

  test("20 concurrent postbacks mixing reg, deposits and custom codes on 4 users: exact counts", async () => {
    const { app, token } = await s.app();
    const codes = ["reg", "dep", "promo.click", "dep", "Lead"];
    const plan = Array.from({ length: 20 }, (_, i) => ({ user: `c${i % 4}`, code: codes[i % codes.length]! }));
    const rs = await Promise.all(plan.map((p) => postback(app.id, p.user, p.code)));
    expect(rs.every((r) => r.status === 200)).toBe(true);
    await s.settle();
    // and the same mix as concurrent transactions in this process (the edge batches what arrives together)
    const at = new Date().toISOString();
    await Promise.all(
      plan.map((p, i) =>
        processItem(s.t.ctx, { kind: "postback", id: `cc-${app.id}-${i}`, at, app_id: app.id, ip: null, method: "GET", external_id: p.user, event: p.code, tags: {}, params: {} }),
      ),
    );
    // the expectation, from the plan run twice: deposits numbered per user, devices = users with the code
    const want: Record<string, [number, Set<string>]> = {};
    const deposits: Record<string, number> = {};
    for (const p of [...plan, ...plan]) {
      let code = p.code;
      if (code === "dep") {
        const n = (deposits[p.user] = (deposits[p.user] ?? 0) + 1);
        code = n === 1 ? "dep" : `dep${n}`;
      }
      const w = (want[code] ??= [0, new Set()]);
      w[0]++;
      w[1].add(p.user);
    }
    expect(counts(await listAll(token, app.id))).toEqual(Object.fromEntries(Object.entries(want).map(([c, [n, users]]) => [c, [n, users.size]])));
  });
});

describe("the counter accumulator", () => {
  test("one transaction: the same code on several devices and several times is one row per code", async () => {
    const { app, token } = await s.app();
    const [a, b] = await s.t.ctx.db.insert(devices).values([{ appId: app.id, installToken: "acc-a" }, { appId: app.id, installToken: "acc-b" }]).returning();
    const t1 = new Date("2031-05-05T10:00:00Z");
    const t2 = new Date("2031-05-05T09:00:00Z");
    await s.t.ctx.db.transaction(async (tx) => {
      const stats = new EventStats();
      await recordEvent(tx, a!, { itemId: "acc-1", code: "x", source: "sdk", at: t1 }, stats);
      await recordEvent(tx, a!, { itemId: "acc-2", code: "x", source: "sdk", at: t1 }, stats);
      await recordEvent(tx, b!, { itemId: "acc-3", code: "x", source: "sdk", at: t2 }, stats);
      await recordEvent(tx, b!, { itemId: "acc-4", code: "dep", source: "sdk", at: t2 }, stats);
      expect(stats.size).toBe(2);
      // nothing written before the flush: the counter rows stay unlocked until the end of the transaction
      expect(await tx.select().from(appEventStats).where(eq(appEventStats.appId, app.id))).toEqual([]);
      await stats.flush(tx);
      expect(stats.size).toBe(0);
    });
    const x = (await s.t.req("GET", `${events(app.id)}/x`, { token })).body;
    expect(x).toMatchObject({ count: 3, devices: 2, first_at: t2.toISOString(), last_at: t1.toISOString() });
    expect(counts(await listAll(token, app.id))).toEqual({ x: [3, 2], dep: [1, 1] });
  });

  // PGlite runs one transaction at a time, so two that wait on each other cannot be staged there
  test.skipIf(!process.env.DATABASE_URL)(
    "two transactions recording the same codes in opposite orders do not deadlock (PostgreSQL)",
    async () => {
      const { app, token } = await s.app();
      const devs = await s.t.ctx.db
        .insert(devices)
        .values(["o-1", "o-2", "o-3"].map((installToken) => ({ appId: app.id, installToken })))
        .returning();
      const [warm, d1, d2] = devs as [typeof devs[0], typeof devs[0], typeof devs[0]];
      // the counter rows exist (hot rows, as in production)
      for (const code of ["p", "q"]) await processItem(s.t.ctx, { kind: "sdk_event", id: `o-w-${code}`, at: new Date().toISOString(), app_id: app.id, device_id: warm.id, event: code });
      // both transactions record their first code, then (once both have) their second: with a counter
      // upsert per event, each would hold one row and wait for the other's (40P01, one rolled back)
      let arrived = 0;
      let release!: () => void;
      const bothRecordedOnce = new Promise<void>((r) => (release = r));
      const run = (d: typeof d1, order: [string, string]) =>
        s.t.ctx.db.transaction(async (tx) => {
          const [locked] = await tx.select().from(devices).where(eq(devices.id, d.id)).for("update");
          const stats = new EventStats();
          const at = new Date();
          await recordEvent(tx, locked!, { itemId: `o-${d.id}-1`, code: order[0], source: "sdk", at }, stats);
          if (++arrived === 2) release();
          await bothRecordedOnce;
          await recordEvent(tx, locked!, { itemId: `o-${d.id}-2`, code: order[1], source: "sdk", at }, stats);
          await stats.flush(tx);
        });
      await Promise.all([run(d1, ["p", "q"]), run(d2, ["q", "p"])]);
      expect(counts(await listAll(token, app.id))).toEqual({ p: [3, 3], q: [3, 3] });
    },
    30_000,
  );
});

describe("declarations", () => {
  test("declare, read, list with zero counts, rename, remove; counters stay", async () => {
    const { app, token } = await s.app();
    await postback(app.id, "d1", "trial:start");
    await s.settle();

    const created = await s.t.req("POST", events(app.id), { token, body: { code: "quiz.done", name: "Quiz finished", description: "Last question answered" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      code: "quiz.done",
      name: "Quiz finished",
      description: "Last question answered",
      builtin: false,
      defined: true,
      count: 0,
      devices: 0,
      first_at: null,
      last_at: null,
    });
    // declaring a code already recorded keeps its counts
    const recorded = await s.t.req("POST", events(app.id), { token, body: { code: "trial:start" } });
    expect(recorded.status).toBe(201);
    expect(recorded.body).toMatchObject({ code: "trial:start", name: null, defined: true, count: 1, devices: 1 });
    expect(typeof recorded.body.first_at).toBe("string");

    const list = await listAll(token, app.id);
    expect(list.map((e) => [e.code, e.defined, e.count])).toEqual([
      ["trial:start", true, 1],
      ["quiz.done", true, 0],
    ]);
    expect((await s.t.req("GET", `${events(app.id)}/quiz.done`, { token })).body).toEqual(created.body);
    // a path code is decoded once, as clients encode it
    expect((await s.t.req("GET", `${events(app.id)}/trial%3Astart`, { token })).body).toEqual(recorded.body);
    expect((await s.t.req("GET", `${events(app.id)}/trial%253Astart`, { token })).status).toBe(404);

    const renamed = await s.t.req("PATCH", `${events(app.id)}/quiz.done`, { token, body: { name: "Quiz done" } });
    expect(renamed).toMatchObject({ status: 200, body: { name: "Quiz done", description: "Last question answered" } });
    const cleared = await s.t.req("PATCH", `${events(app.id)}/quiz.done`, { token, body: { description: null } });
    expect(cleared.body).toMatchObject({ name: "Quiz done", description: null });

    // recorded after the declaration: counted under the declared code
    await postback(app.id, "d1", "quiz.done");
    await s.settle();
    expect((await s.t.req("GET", `${events(app.id)}/quiz.done`, { token })).body).toMatchObject({ defined: true, count: 1, devices: 1 });

    expect((await s.t.req("DELETE", `${events(app.id)}/trial:start`, { token })).status).toBe(204);
    expect((await s.t.req("DELETE", `${events(app.id)}/trial:start`, { token })).status).toBe(404);
    expect((await s.t.req("GET", `${events(app.id)}/trial:start`, { token })).body).toMatchObject({ defined: false, name: null, count: 1 });
    // a declared, never recorded code disappears with its declaration
    await s.t.req("POST", events(app.id), { token, body: { code: "never" } });
    expect((await s.t.req("DELETE", `${events(app.id)}/never`, { token })).status).toBe(204);
    expect((await s.t.req("GET", `${events(app.id)}/never`, { token })).status).toBe(404);
    expect((await listAll(token, app.id)).map((e) => e.code).sort()).toEqual(["quiz.done", "trial:start"]);
  });

  test("errors: duplicate 409, built-in and malformed codes 400, unknown 404, bounded text", async () => {
    const { app, token } = await s.app();
    expect((await s.t.req("POST", events(app.id), { token, body: { code: "Signup" } })).status).toBe(201);
    expect(await s.t.req("POST", events(app.id), { token, body: { code: "Signup" } })).toEqual(
      expect.objectContaining({ status: 409, body: { error: "event Signup is already declared" } }),
    );
    // case-sensitive like ingest: another code
    expect((await s.t.req("POST", events(app.id), { token, body: { code: "signup" } })).status).toBe(201);
    for (const code of ["install", "reg", "dep", "dep2", "dep17", "purchase", "subscribe", "onscreen", "background", "closed"]) {
      const r = await s.t.req("POST", events(app.id), { token, body: { code } });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain(`code ${code} is built in`);
    }
    for (const code of ["", "has space", "x".repeat(65), "é", "a/b", 7]) {
      const r = await s.t.req("POST", events(app.id), { token, body: { code } });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain("code is required");
    }
    expect((await s.t.req("POST", events(app.id), { token, body: {} })).status).toBe(400);
    expect((await s.t.req("POST", events(app.id), { token, body: { code: "x".repeat(64) } })).status).toBe(201);
    const longName = await s.t.req("POST", events(app.id), { token, body: { code: "n1", name: "n".repeat(256) } });
    expect(longName).toMatchObject({ status: 400, body: { error: "name must be 1 to 255 characters, or null" } });
    expect(await s.t.req("POST", events(app.id), { token, body: { code: "n1", description: "d".repeat(2001) } })).toMatchObject({
      status: 400,
      body: { error: "description must be at most 2000 characters, or null" },
    });
    expect((await s.t.req("PATCH", `${events(app.id)}/Signup`, { token, body: { name: "" } })).status).toBe(400);
    expect((await s.t.req("PATCH", `${events(app.id)}/Signup`, { token, body: { name: 5 } })).status).toBe(400);

    expect(await s.t.req("GET", `${events(app.id)}/nope`, { token })).toMatchObject({ status: 404, body: { error: "event not found" } });
    expect((await s.t.req("GET", `${events(app.id)}/bad%20code`, { token })).status).toBe(404);
    expect(await s.t.req("PATCH", `${events(app.id)}/nope`, { token, body: { name: "x" } })).toMatchObject({
      status: 404,
      body: { error: "event declaration not found" },
    });
    // a recorded but undeclared code has no declaration to change
    await postback(app.id, "e1", "seen");
    await s.settle();
    expect((await s.t.req("PATCH", `${events(app.id)}/seen`, { token, body: { name: "x" } })).status).toBe(404);
    expect((await s.t.req("DELETE", `${events(app.id)}/seen`, { token })).status).toBe(404);

    expect((await s.t.req("GET", events(app.id))).status).toBe(401);
    expect((await s.t.req("GET", "/api/v3/apps/abc/events", { token })).status).toBe(404);
  });

  test("the declaration cap counts per app", async () => {
    const { app, token } = await s.app();
    const { MAX_DEFINITIONS_PER_APP } = await import("./service");
    const { appEventDefinitions } = await import("@pushstack/schema");
    await s.t.ctx.db.insert(appEventDefinitions).values(Array.from({ length: MAX_DEFINITIONS_PER_APP - 1 }, (_, i) => ({ appId: app.id, code: `bulk${i}` })));
    expect((await s.t.req("POST", events(app.id), { token, body: { code: "last" } })).status).toBe(201);
    const over = await s.t.req("POST", events(app.id), { token, body: { code: "one.more" } });
    expect(over).toMatchObject({ status: 400, body: { error: `an app declares at most ${MAX_DEFINITIONS_PER_APP} event codes` } });
  });
});

describe("listing", () => {
  test("sort=code and sort=count page through everything once, in order; bad parameters are 400", async () => {
    const { app, token } = await s.app();
    // counts 3, 2, 2, 1 and three declared zeros, codes in mixed case
    for (const [user, code] of [["a", "b"], ["b", "b"], ["c", "b"], ["a", "A"], ["b", "A"], ["a", "c"], ["b", "c"], ["a", "Z"]]) await postback(app.id, user!, code!);
    for (const code of ["a", "y", "B"]) await s.t.req("POST", events(app.id), { token, body: { code } });
    await s.settle();
    const byCount = ["b", "A", "c", "Z", "B", "a", "y"];
    const byCode = ["A", "B", "Z", "a", "b", "c", "y"];
    expect((await listAll(token, app.id)).map((e) => e.code)).toEqual(byCount);
    for (const limit of [1, 2, 3]) {
      expect((await listAll(token, app.id, "count", limit)).map((e) => e.code)).toEqual(byCount);
      expect((await listAll(token, app.id, "code", limit)).map((e) => e.code)).toEqual(byCode);
    }
    const first = await s.t.req("GET", `${events(app.id)}?sort=code&limit=2`, { token });
    expect(first.body.next_cursor).toEqual(expect.any(String));
    // a cursor belongs to its sort
    expect((await s.t.req("GET", `${events(app.id)}?sort=count&cursor=${first.body.next_cursor}`, { token })).status).toBe(400);
    for (const qs of ["sort=name", "limit=0", "limit=1001", "limit=x", "cursor=junk", `cursor=${Buffer.from('["count",-1,"a"]').toString("base64url")}`]) {
      const r = await s.t.req("GET", `${events(app.id)}?${qs}`, { token });
      expect(r.status).toBe(400);
      expect(typeof r.body.error).toBe("string");
    }
  });
});

describe("access", () => {
  test("another account's app is 404 on every route; an app-scoped key reaches its own app only", async () => {
    const owner = await s.t.user({ plan: "team" });
    const mine = (await s.t.req("POST", "/api/v3/apps", { token: owner.token, body: { name: "one", platform: "web" } })).body;
    const other = (await s.t.req("POST", "/api/v3/apps", { token: owner.token, body: { name: "two", platform: "web" } })).body;
    expect((await s.t.req("POST", events(mine.id), { token: owner.token, body: { code: "secret" } })).status).toBe(201);
    expect((await s.t.req("POST", events(other.id), { token: owner.token, body: { code: "secret" } })).status).toBe(201);

    const stranger = await s.t.user();
    const calls: Array<[string, string, unknown?]> = [
      ["GET", events(mine.id)],
      ["GET", `${events(mine.id)}/secret`],
      ["POST", events(mine.id), { code: "mine" }],
      ["PATCH", `${events(mine.id)}/secret`, { name: "x" }],
      ["DELETE", `${events(mine.id)}/secret`],
    ];
    for (const [method, path, body] of calls) {
      expect(await s.t.req(method, path, { token: stranger.token, body })).toMatchObject({ status: 404, body: { error: "app not found" } });
    }

    const key = (await s.t.req("POST", "/api/v3/api-keys", { token: owner.token, body: { name: "one only", app_id: mine.id } })).body.key;
    expect((await s.t.req("GET", `${events(mine.id)}/secret`, { token: key })).status).toBe(200);
    expect((await s.t.req("PATCH", `${events(mine.id)}/secret`, { token: key, body: { name: "ok" } })).status).toBe(200);
    for (const [method, path, body] of calls.map(([m, p, b]) => [m, p.replace(`/${mine.id}/`, `/${other.id}/`), b] as const)) {
      expect(await s.t.req(method, path, { token: key, body })).toMatchObject({ status: 404, body: { error: "app not found" } });
    }
    // nothing of the other app changed
    expect((await s.t.req("GET", `${events(other.id)}/secret`, { token: owner.token })).body).toMatchObject({ defined: true, name: null });
  });
});

test("the routes are documented under Events in /openapi.json", async () => {
  const spec = (await s.t.req("GET", "/openapi.json")).body;
  const list = spec.paths["/api/v3/apps/{app_id}/events"];
  const one = spec.paths["/api/v3/apps/{app_id}/events/{code}"];
  expect(Object.keys(list).sort()).toEqual(["get", "post"]);
  expect(Object.keys(one).sort()).toEqual(["delete", "get", "patch"]);
  for (const op of [...Object.values(list), ...Object.values(one)] as any[]) expect(op.tags).toEqual(["Events"]);
  expect(JSON.stringify(list.get)).toContain("next_cursor");
});
