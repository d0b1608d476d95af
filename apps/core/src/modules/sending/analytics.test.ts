import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sendStatsDaily } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";
import { makePack } from "./testkit";

/**
 * The Analytics routes read the daily aggregate (send_stats_daily), so these tests write it directly:
 * what they check is scoping (whose apps), grouping and plan gates. That the aggregate is filled from
 * real sends and SDK reports is checked end to end in events.test.ts and schedulers.test.ts.
 */
let t: TestCore;
beforeAll(async () => {
  t = await startTestCore();
});
afterAll(() => t.close());

const app = async (token: string, name: string) => (await t.req("POST", "/api/v3/apps", { token, body: { name, platform: "web" } })).body.id as number;
type Stat = { appId: number; day: string; source?: string; sourceId?: number; packId?: number; templateId?: number; sent: number; delivered?: number; clicked?: number };
const seed = (rows: Stat[]) =>
  t.ctx.db.insert(sendStatsDaily).values(rows.map((r) => ({ source: "pack_scheduled", sourceId: 1, packId: 0, templateId: 0, delivered: 0, clicked: 0, ...r })));
const get = (path: string, token: string) => t.req("GET", path, { token });

describe("over the caller's apps, and per pack for administrators", () => {
  let owner: { token: string; id: number };
  let other: { token: string; id: number };
  let admin: string;
  let a1: number, a2: number, b1: number, pack: number;
  beforeAll(async () => {
    owner = await t.user({ plan: "team" });
    other = await t.user({ plan: "team" });
    admin = (await t.user({ admin: true })).token;
    [a1, a2, b1] = [await app(owner.token, "A1"), await app(owner.token, "A2"), await app(other.token, "B1")];
    // a system pack attached to apps of both accounts
    pack = (await makePack(t, { userId: null, appId: a1, languages: ["en"], fallback: "en", system: true, published: true })).packId;
    await seed([
      { appId: a1, day: "2030-01-01", packId: pack, sourceId: 11, sent: 100, delivered: 80, clicked: 8 },
      { appId: a1, day: "2030-01-02", packId: pack, sourceId: 11, sent: 50, delivered: 40, clicked: 2 },
      { appId: a2, day: "2030-01-01", packId: pack, sourceId: 12, sent: 10, delivered: 10, clicked: 5 },
      { appId: a2, day: "2030-01-01", source: "scheduler", sourceId: 7, templateId: 3, sent: 1 },
      { appId: b1, day: "2030-01-01", packId: pack, sourceId: 13, sent: 1000, delivered: 500, clicked: 50 },
    ]);
  });

  test("account: all the caller's apps, never another account's; by app; one app; CTR = clicked / delivered", async () => {
    const all = (await get("/api/v3/analytics", owner.token)).body;
    expect(all).toEqual({
      group_by: "day",
      totals: { sent: 161, failed: 0, delivered: 130, clicked: 15, ctr: 0.1154 },
      rows: [
        { day: "2030-01-01", sent: 111, failed: 0, delivered: 90, clicked: 13, ctr: 0.1444 },
        { day: "2030-01-02", sent: 50, failed: 0, delivered: 40, clicked: 2, ctr: 0.05 },
      ],
    });
    const byApp = (await get(`/api/v3/analytics?group_by=app&pack_id=${pack}`, owner.token)).body;
    expect(byApp.rows.map((r: { app_id: number; sent: number }) => [r.app_id, r.sent])).toEqual([
      [a1, 150],
      [a2, 10],
    ]);
    expect((await get(`/api/v3/analytics?app_id=${a2}&group_by=scheduler`, owner.token)).body.rows).toEqual([
      { source: "scheduler", scheduler_id: 7, sent: 1, failed: 0, delivered: 0, clicked: 0, ctr: 0 },
    ]);
    expect((await get(`/api/v3/analytics?date_from=2030-01-02`, owner.token)).body.totals.sent).toBe(50);
    expect((await get(`/api/v3/analytics`, other.token)).body.totals.sent).toBe(1000);
  });

  test("account: another account's app is 404; bad parameters are 400; grouping beyond day needs Pro", async () => {
    const r = await get(`/api/v3/analytics?app_id=${b1}`, owner.token);
    expect([r.status, r.body.error]).toEqual([404, "app not found"]);
    for (const qs of ["app_id=x", "group_by=device", "date_to=2030-02-30", "source=web"]) {
      const bad = await get(`/api/v3/analytics?${qs}`, owner.token);
      expect([qs, bad.status, typeof bad.body.error]).toEqual([qs, 400, "string"]);
    }
    const free = await t.user();
    expect((await get("/api/v3/analytics", free.token)).body).toMatchObject({ totals: { sent: 0 }, rows: [] });
    const gated = await get("/api/v3/analytics?group_by=app", free.token);
    expect(gated.status).toBe(403);
    expect(gated.body.error).toContain("Pro");
  });

  test("an app-scoped API key sees its app only", async () => {
    const key = await t.req("POST", "/api/v3/api-keys", { token: owner.token, body: { name: "a2 only", app_id: a2 } });
    expect(key.status).toBe(201);
    const k = key.body.key as string;
    expect((await get("/api/v3/analytics", k)).body.totals.sent).toBe(11);
    expect((await get(`/api/v3/analytics?app_id=${a1}`, k)).status).toBe(404);
    expect((await get(`/api/v3/apps/${a1}/analytics`, k)).status).toBe(404);
    expect((await get(`/api/v3/apps/${a2}/analytics`, k)).body).toMatchObject({ app_id: a2, totals: { sent: 11 } });
  });

  test("admin: a pack over every account's apps, by app; 404 for no such pack; admins only", async () => {
    const r = await get(`/api/v3/admin/push-packs/${pack}/analytics?group_by=app`, admin);
    expect(r.status).toBe(200);
    expect(r.body.pack_id).toBe(pack);
    expect(r.body.rows.map((x: { app_id: number; sent: number }) => [x.app_id, x.sent])).toEqual([
      [a1, 150],
      [a2, 10],
      [b1, 1000],
    ]);
    expect(r.body.totals).toMatchObject({ sent: 1160, delivered: 630, clicked: 65 });
    expect((await get(`/api/v3/admin/push-packs/${pack}/analytics?group_by=push`, admin)).body.rows).toHaveLength(3);
    expect((await get(`/api/v3/admin/push-packs/${pack + 1000}/analytics`, admin)).status).toBe(404);
    expect((await get(`/api/v3/admin/push-packs/${pack}/analytics?pack_id=${pack}`, admin)).status).toBe(400);
    expect((await get(`/api/v3/admin/push-packs/${pack}/analytics`, owner.token)).status).toBe(403);
  });

  test("documented under Analytics", async () => {
    const doc = (await t.req("GET", "/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v3/analytics", "/api/v3/apps/{app_id}/analytics", "/api/v3/admin/push-packs/{pack_id}/analytics"]));
    expect(doc.paths["/api/v3/analytics"].get.tags).toContain("Analytics");
  });
});
