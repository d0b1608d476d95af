import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { devices } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";
import { decodeCursor, encodeCursor } from "./views";

let t: TestCore;
beforeAll(async () => {
  t = await startTestCore();
});
afterAll(() => t.close());

async function appOf(plan?: string) {
  const u = await t.user({ plan });
  const app = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "android" } })).body;
  return { token: u.token, app, userId: u.id };
}

const DEVICE_KEYS = [
  "app_id", "country", "created_at", "events", "external_id", "has_transport_token", "id", "install_token", "language",
  "last_active_at", "model", "platform", "tags", "transport_type", "tz_sec",
];

describe("server-side registration and update", () => {
  test("POST creates srv_<external_id> (201) with the contract's device object; again: 200, updated", async () => {
    const { token, app } = await appOf();
    const r = await t.req("POST", `/api/v3/apps/${app.id}/devices`, {
      token,
      body: { external_id: "u-1", platform: "android", transport_token: "fcm-token", language: "en_us", country: "us", tz_sec: -18000, model: "Pixel 8", tags: { vip: "yes" } },
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(DEVICE_KEYS);
    expect(r.body).toMatchObject({
      app_id: app.id, external_id: "u-1", install_token: "srv_u-1", platform: "android", country: "US", language: "en-US",
      model: "Pixel 8", tz_sec: -18000, tags: { vip: "yes" }, events: [], has_transport_token: true, transport_type: "fcm",
    });
    expect(typeof r.body.id).toBe("number");
    const again = await t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "u-1", country: "DE", tags: { level: "3" } } });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(r.body.id);
    expect(again.body).toMatchObject({ country: "DE", language: "en-US", tags: { vip: "yes", level: "3" } });
  });

  test("PUT updates the server-side device; 404 when there is none; tags merge, an empty value removes", async () => {
    const { token, app } = await appOf();
    expect((await t.req("PUT", `/api/v3/apps/${app.id}/devices/nobody`, { token, body: { country: "BR" } })).status).toBe(404);
    await t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "a b/c", tags: { x: "1", y: "2" } } });
    const r = await t.req("PUT", `/api/v3/apps/${app.id}/devices/${encodeURIComponent("a b/c")}`, { token, body: { platform: "web", tags: { y: "", z: "3" } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ external_id: "a b/c", platform: "web", tags: { x: "1", z: "3" } });
    expect(r.body.tags.y).toBeUndefined();
  });

  test("validation: platform/transport pairing, codes, and the field named", async () => {
    const { token, app } = await appOf();
    const post = (body: unknown) => t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body });
    expect((await post({})).body).toEqual({ error: "external_id is required" });
    expect((await post({ external_id: "x", platform: "ios", transport_type: "fcm", transport_token: "t" })).body).toEqual({ error: "transport_type must be apns for platform ios" });
    expect((await post({ external_id: "x", transport_token: "t" })).body).toEqual({ error: "a transport_token needs platform or transport_type" });
    expect((await post({ external_id: "x", country: "USA" })).body).toEqual({ error: "country must be a 2-letter ISO 3166-1 code" });
    expect((await post({ external_id: "x", language: "???" })).body).toEqual({ error: "language must be a language code such as en or pt-BR" });
    expect((await post({ external_id: "x", tags: { "bad key!": "v" } })).body.error).toStartWith("tags must be an object");
    expect((await post({ external_id: "x".repeat(256) })).status).toBe(400);
  });

  test("tenancy: another account's app is 404; no token is 401; an archived app is 403", async () => {
    const a = await appOf();
    const b = await appOf();
    expect((await t.req("POST", `/api/v3/apps/${a.app.id}/devices`, { token: b.token, body: { external_id: "x" } })).status).toBe(404);
    expect((await t.req("POST", `/api/v3/apps/${a.app.id}/devices`, { body: { external_id: "x" } })).status).toBe(401);
    await t.req("PATCH", `/api/v3/apps/${a.app.id}`, { token: a.token, body: { archived: true } });
    expect(await t.req("POST", `/api/v3/apps/${a.app.id}/devices`, { token: a.token, body: { external_id: "x" } })).toMatchObject({ status: 403, body: { error: "app is archived" } });
  });

  test("the legacy /api/b/v2/apps/:app_id/devices behaves as the v3 path", async () => {
    const { token, app } = await appOf();
    const r = await t.req("POST", `/api/b/v2/apps/${app.id}/devices`, { token, body: { external_id: "legacy" } });
    expect(r.status).toBe(201);
    expect((await t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "legacy" } })).body.id).toBe(r.body.id);
    expect((await t.req("PUT", `/api/b/v2/apps/${app.id}/devices/legacy`, { token, body: { country: "FR" } })).body.country).toBe("FR");
  });

  test("install cap: Free past 5,000 is 403 naming Pro, Pro past 50,000 names Team; existing devices keep working", async () => {
    for (const [plan, cap, next] of [["free", 5000, "Pro"], ["pro", 50000, "Team"]] as const) {
      const { token, app } = await appOf(plan);
      await t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "early" } });
      await t.ctx.db.execute(sql`insert into devices (app_id, install_token) select ${app.id}, 'bulk-' || g from generate_series(1, ${cap - 1}) g`);
      const r = await t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "late" } });
      expect(r.status).toBe(403);
      expect(r.body.error).toContain(next);
      expect((await t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id: "early", country: "IT" } })).status).toBe(200);
      expect((await t.req("PUT", `/api/v3/apps/${app.id}/devices/early`, { token, body: { country: "ES" } })).status).toBe(200);
    }
    // Team: no cap
    const team = await appOf("team");
    await t.ctx.db.execute(sql`insert into devices (app_id, install_token) select ${team.app.id}, 'bulk-' || g from generate_series(1, 50000) g`);
    expect((await t.req("POST", `/api/v3/apps/${team.app.id}/devices`, { token: team.token, body: { external_id: "more" } })).status).toBe(201);
  }, 60_000);
});

describe("device query", () => {
  test("filters combine; events and tags must all match; language matches its regional variants", async () => {
    const { token, app } = await appOf();
    const mk = (external_id: string, body: Record<string, unknown>) => t.req("POST", `/api/v3/apps/${app.id}/devices`, { token, body: { external_id, ...body } });
    await mk("a", { country: "BR", language: "pt-BR", platform: "android", tags: { seg: "vip", src: "fb" } });
    await mk("b", { country: "BR", language: "pt", platform: "web", tags: { seg: "vip" } });
    await mk("c", { country: "US", language: "en-US", platform: "ios", tags: { seg: "new" } });
    const ids = Object.fromEntries((await t.ctx.db.select().from(devices).where(eq(devices.appId, app.id))).map((d) => [d.externalId, d.id]));
    await t.ctx.db.update(devices).set({ events: ["reg", "dep", "dep2"] }).where(eq(devices.id, ids.a!));
    await t.ctx.db.update(devices).set({ events: ["reg"] }).where(eq(devices.id, ids.b!));
    const q = async (body: Record<string, unknown>) => {
      const r = await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id, ...body } });
      expect(r.status).toBe(200);
      return r.body.items.map((d: any) => d.external_id).sort();
    };
    expect(await q({})).toEqual(["a", "b", "c"]);
    expect(await q({ country: "br" })).toEqual(["a", "b"]);
    expect(await q({ language: "pt" })).toEqual(["a", "b"]);
    expect(await q({ language: "pt-BR" })).toEqual(["a"]);
    expect(await q({ platform: "ios" })).toEqual(["c"]);
    expect(await q({ external_id: "b" })).toEqual(["b"]);
    expect(await q({ events: ["reg"] })).toEqual(["a", "b"]);
    expect(await q({ events: ["reg", "dep2"] })).toEqual(["a"]);
    expect(await q({ events: ["dep3"] })).toEqual([]);
    expect(await q({ tags: { seg: "vip" } })).toEqual(["a", "b"]);
    expect(await q({ tags: { seg: "vip", src: "fb" } })).toEqual(["a"]);
    expect(await q({ country: "BR", platform: "web", tags: { seg: "vip" }, events: ["reg"] })).toEqual(["b"]);
    const one = await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id, external_id: "a" } });
    expect(one.body.items[0].events).toEqual(["reg", "dep", "dep2"]);
    expect(one.body.next_cursor).toBeNull();
  });

  test("keyset pagination: every device once, in id order; limit bounds; a bad cursor is 400", async () => {
    const { token, app } = await appOf();
    await t.ctx.db.execute(sql`insert into devices (app_id, install_token) select ${app.id}, 'p-' || g from generate_series(1, 120) g`);
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: { status: number; body: any } = await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id, limit: 50, cursor } });
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((d: any) => d.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(120);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    expect(new Set(seen).size).toBe(120);
    const dflt = await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id } });
    expect(dflt.body.items).toHaveLength(50);
    expect((await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id, limit: 1001 } })).body).toEqual({ error: "limit must be an integer 1 to 1000" });
    expect((await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id, limit: 0 } })).status).toBe(400);
    expect((await t.req("POST", "/api/v3/query/app-instances", { token, body: { app_id: app.id, cursor: "garbage" } })).body).toEqual({ error: "cursor must be the next_cursor of a previous page" });
    expect((await t.req("POST", "/api/v3/query/app-instances", { token, body: {} })).body).toEqual({ error: "app_id is required" });
    expect(decodeCursor(encodeCursor(42))).toBe(42);
  });

  test("only the owner can query an app's devices", async () => {
    const a = await appOf();
    const b = await appOf();
    expect((await t.req("POST", "/api/v3/query/app-instances", { token: b.token, body: { app_id: a.app.id } })).status).toBe(404);
    expect((await t.req("POST", "/api/v3/query/app-instances", { body: { app_id: a.app.id } })).status).toBe(401);
  });

  test("the query uses the indexes (PostgreSQL plans)", async () => {
    if (!process.env.DATABASE_URL) return; // PGlite's planner sees tiny tables the same way; the plan check needs real statistics
    const { app } = await appOf();
    await t.ctx.db.execute(sql`insert into devices (app_id, install_token, country) select ${app.id}, 'ix-' || g, case when g % 50 = 0 then 'BR' else 'US' end from generate_series(1, 20000) g`);
    await t.ctx.db.execute(sql`analyze devices`);
    const plan = async (q: ReturnType<typeof sql>) => JSON.stringify(await t.ctx.db.execute(sql`explain ${q}`));
    expect(await plan(sql`select * from devices where app_id = ${app.id} and id > 10 order by id limit 51`)).toMatch(/Index/);
    expect(await plan(sql`select * from devices where app_id = ${app.id} and country = 'BR' order by id limit 51`)).toContain("devices_app_country_idx");
    expect(await plan(sql`select * from devices where app_id = ${app.id} and tags @> '{"seg":"vip"}'::jsonb order by id limit 51`)).toMatch(/devices_tags_gin|devices_app_id_idx/);
  });
});
