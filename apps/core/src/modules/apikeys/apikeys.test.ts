import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiKeys, users } from "@pushstack/schema";
import { eq } from "drizzle-orm";
import { startTestCore, type TestCore } from "../../testing/harness";

let t: TestCore;
beforeAll(async () => {
  t = await startTestCore();
});
afterAll(() => t.close());

describe("API keys", () => {
  test("below the Team plan: 403 naming the Team plan", async () => {
    for (const plan of ["free", "pro"]) {
      const u = await t.user({ plan });
      const r = await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "k" } });
      expect(r.status).toBe(403);
      expect(r.body.error).toContain("Team plan");
      expect((await t.req("GET", "/api/v3/api-keys", { token: u.token })).status).toBe(403);
    }
  });

  test("account key: shown once, stored as a hash, works as bearer on /api/v3", async () => {
    const u = await t.user({ plan: "team" });
    const r = await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "ci" } });
    expect(r.status).toBe(201);
    const id = r.body.id;
    expect(typeof id).toBe("number");
    expect(r.body).toMatchObject({ name: "ci", scope: "account", app_id: null });
    expect(r.body.key).toMatch(/^psk_live_[A-Za-z0-9_-]{40,}$/);
    const [row] = await t.ctx.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    expect(JSON.stringify(row)).not.toContain(r.body.key.slice(9));
    const list = await t.req("GET", "/api/v3/api-keys", { token: u.token });
    expect(list.body.length).toBe(1);
    expect(JSON.stringify(list.body)).not.toContain(r.body.key.slice(9));
    expect(list.body[0].key).toBeUndefined();
    const app = await t.req("POST", "/api/v3/apps", { token: r.body.key, body: { name: "via key", platform: "web" } });
    expect(app.status).toBe(201);
    const p = await t.req("GET", "/api/v3/profile", { token: r.body.key });
    expect(p.body).toMatchObject({ auth: "api_key", api_key_scope: "account", is_admin: false });
  });

  test("app-scoped key reaches its app only; other apps are 404", async () => {
    const u = await t.user({ plan: "team" });
    const a1 = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "one", platform: "web" } })).body;
    const a2 = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "two", platform: "web" } })).body;
    const k = await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "one only", app_id: a1.id } });
    expect(k.status).toBe(201);
    expect(k.body).toMatchObject({ scope: "app", app_id: a1.id });
    expect((await t.req("GET", `/api/v3/apps/${a1.id}`, { token: k.body.key })).status).toBe(200);
    const other = await t.req("GET", `/api/v3/apps/${a2.id}`, { token: k.body.key });
    expect(other).toMatchObject({ status: 404, body: { error: "app not found" } });
    expect((await t.req("GET", `/api/v3/apps/${a2.id}/push-packs`, { token: k.body.key })).status).toBe(404);
    const list = await t.req("GET", "/api/v3/apps", { token: k.body.key });
    expect(list.body.map((a: any) => a.id)).toEqual([a1.id]);
    expect((await t.req("POST", "/api/v3/apps", { token: k.body.key, body: { name: "x", platform: "web" } })).status).toBe(403);
  });

  test("a key for another account's app is 404; admin scope needs an administrator", async () => {
    const u = await t.user({ plan: "team" });
    const v = await t.user({ plan: "team" });
    const foreign = (await t.req("POST", "/api/v3/apps", { token: v.token, body: { name: "v", platform: "web" } })).body;
    expect((await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "x", app_id: foreign.id } })).status).toBe(404);
    const adm = await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "x", scope: "admin" } });
    expect(adm).toMatchObject({ status: 403, body: { error: "admin access required" } });
    const bad = await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "x", scope: "root" } });
    expect(bad.status).toBe(400);
  });

  test("admin key reaches admin routes; an account key of an admin does not", async () => {
    const admin = await t.user({ plan: "team", admin: true });
    const ak = (await t.req("POST", "/api/v3/api-keys", { token: admin.token, body: { name: "ops", scope: "admin" } })).body;
    expect(ak.scope).toBe("admin");
    expect((await t.req("GET", "/api/v3/admin/push-packs", { token: ak.key })).status).toBe(200);
    const plain = (await t.req("POST", "/api/v3/api-keys", { token: admin.token, body: { name: "plain" } })).body;
    const r = await t.req("GET", "/api/v3/admin/push-packs", { token: plain.key });
    expect(r).toMatchObject({ status: 403, body: { error: "admin access required" } });
  });

  test("revoked keys stop working; another account's key id is 404", async () => {
    const u = await t.user({ plan: "team" });
    const v = await t.user({ plan: "team" });
    const k = (await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "tmp" } })).body;
    expect((await t.req("DELETE", `/api/v3/api-keys/${k.id}`, { token: v.token })).status).toBe(404);
    expect((await t.req("DELETE", `/api/v3/api-keys/${k.id}`, { token: u.token })).status).toBe(204);
    expect((await t.req("GET", "/api/v3/profile", { token: k.key })).status).toBe(401);
    expect((await t.req("GET", "/api/v3/api-keys", { token: u.token })).body).toEqual([]);
  });

  test("a key stops working when its account leaves the Team plan", async () => {
    const u = await t.user({ plan: "team" });
    const k = (await t.req("POST", "/api/v3/api-keys", { token: u.token, body: { name: "k" } })).body;
    await t.ctx.db.update(users).set({ plan: "pro" }).where(eq(users.id, u.id));
    const r = await t.req("GET", "/api/v3/profile", { token: k.key });
    expect(r.status).toBe(403);
    expect(r.body.error).toContain("Team plan");
  });
});
