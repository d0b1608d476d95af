import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestCore, type TestCore } from "../../testing/harness";

let t: TestCore;
let admin: { token: string };
let user: { token: string; id: number };
beforeAll(async () => {
  t = await startTestCore();
  admin = await t.user({ admin: true });
  user = await t.user();
});
afterAll(() => t.close());

const A = "/api/v3/admin/push-packs";
const sched = { day_of_week: 1, send_time: "09:30", title: "Hi {{external_id}}", body: "{Good|Great} {TimeOfDay}!" };
const evt = { event_code: "reg", delay_minutes: 5, title: "Welcome", body: "Thanks for joining {{app_name}}" };

async function systemPack(publish: boolean) {
  const p = (await t.req("POST", A, { token: admin.token, body: { name: "Sys", fallback_language: "en" } })).body;
  const l = (await t.req("POST", `${A}/${p.id}/languages`, { token: admin.token, body: { language_code: "en" } })).body;
  const s = (await t.req("POST", `${A}/${p.id}/languages/${l.id}/scheduled`, { token: admin.token, body: sched })).body;
  const e = (await t.req("POST", `${A}/${p.id}/languages/${l.id}/events`, { token: admin.token, body: evt })).body;
  if (publish) await t.req("PUT", `${A}/${p.id}/publish`, { token: admin.token, body: { is_published: true } });
  return { p, l, s, e };
}

describe("admin: system packs", () => {
  test("create answers 201 with is_system true, is_published false, user_id null", async () => {
    const r = await t.req("POST", A, { token: admin.token, body: { name: "Casino RU", fallback_language: "en" } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "Casino RU", fallback_language: "en", is_system: true, is_published: false, user_id: null });
  });
  test("non-admins get 403 admin access required on every admin route; anonymous 401", async () => {
    const { p, l, s, e } = await systemPack(false);
    const calls: [string, string, unknown?][] = [
      ["GET", A],
      ["POST", A, { name: "x", fallback_language: "en" }],
      ["PUT", `${A}/${p.id}`, { name: "x", fallback_language: "en" }],
      ["DELETE", `${A}/${p.id}`],
      ["PUT", `${A}/${p.id}/publish`, { is_published: true }],
      ["POST", `${A}/${p.id}/languages`, { language_code: "de" }],
      ["DELETE", `${A}/${p.id}/languages/${l.id}`],
      ["POST", `${A}/${p.id}/languages/${l.id}/scheduled`, sched],
      ["PUT", `${A}/${p.id}/scheduled/${s.id}`, sched],
      ["DELETE", `${A}/${p.id}/scheduled/${s.id}`],
      ["POST", `${A}/${p.id}/languages/${l.id}/events`, evt],
      ["PUT", `${A}/${p.id}/events/${e.id}`, evt],
      ["DELETE", `${A}/${p.id}/events/${e.id}`],
    ];
    for (const [m, path, body] of calls) {
      const r = await t.req(m, path, { token: user.token, body });
      expect(r).toMatchObject({ status: 403, body: { error: "admin access required" } });
      expect((await t.req(m, path, { body })).status).toBe(401);
    }
  });
  test("list includes drafts; publish toggles; 404 and 400 as the spec says", async () => {
    const { p } = await systemPack(false);
    const list = await t.req("GET", A, { token: admin.token });
    expect(list.body.some((x: any) => x.id === p.id && !x.is_published)).toBe(true);
    const pub = await t.req("PUT", `${A}/${p.id}/publish`, { token: admin.token, body: { is_published: true } });
    expect(pub).toMatchObject({ status: 200, body: { id: p.id, is_published: true } });
    const unpub = await t.req("PUT", `${A}/${p.id}/publish`, { token: admin.token, body: { is_published: false } });
    expect(unpub.body.is_published).toBe(false);
    expect((await t.req("PUT", `${A}/999999/publish`, { token: admin.token, body: { is_published: true } })).status).toBe(404);
    const own = (await t.req("POST", "/api/v3/push-packs", { token: user.token, body: { name: "mine", fallback_language: "en" } })).body;
    expect((await t.req("PUT", `${A}/${own.id}/publish`, { token: admin.token, body: { is_published: true } })).status).toBe(404);
    const missing = await t.req("PUT", `${A}/${p.id}/publish`, { token: admin.token, body: {} });
    expect(missing).toMatchObject({ status: 400, body: { error: "is_published is required" } });
    const wrong = await t.req("PUT", `${A}/${p.id}/publish`, { token: admin.token, body: { is_published: "yes" } });
    expect(wrong).toMatchObject({ status: 400, body: { error: "is_published is required and must be a boolean" } });
  });
  test("update and delete a pack", async () => {
    const { p } = await systemPack(false);
    const u = await t.req("PUT", `${A}/${p.id}`, { token: admin.token, body: { name: "Renamed", fallback_language: "es" } });
    expect(u).toMatchObject({ status: 200, body: { name: "Renamed", fallback_language: "es" } });
    expect((await t.req("DELETE", `${A}/${p.id}`, { token: admin.token })).status).toBe(204);
    expect((await t.req("GET", `/api/v3/push-packs/${p.id}`, { token: admin.token })).status).toBe(404);
    expect((await t.req("DELETE", `${A}/${p.id}`, { token: admin.token })).status).toBe(404);
  });
});

describe("languages and pushes", () => {
  test("duplicate language_code is 409; deleting a language cascades to its pushes", async () => {
    const { p, l, s } = await systemPack(false);
    const dup = await t.req("POST", `${A}/${p.id}/languages`, { token: admin.token, body: { language_code: "en" } });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toContain("en");
    expect((await t.req("DELETE", `${A}/${p.id}/languages/${l.id}`, { token: admin.token })).status).toBe(204);
    expect((await t.req("GET", `/api/v3/push-packs/${p.id}/languages/${l.id}/scheduled`, { token: admin.token })).status).toBe(404);
    expect((await t.req("PUT", `${A}/${p.id}/scheduled/${s.id}`, { token: admin.token, body: sched })).status).toBe(404);
    const again = await t.req("POST", `${A}/${p.id}/languages`, { token: admin.token, body: { language_code: "en" } });
    expect(again.status).toBe(201);
  });
  test("scheduled push: HH:MM in, HH:MM:SS out; update; delete", async () => {
    const { p, s } = await systemPack(false);
    expect(s).toMatchObject({ day_of_week: 1, send_time: "09:30:00", title: sched.title, body: sched.body, audience_tag: null });
    const u = await t.req("PUT", `${A}/${p.id}/scheduled/${s.id}`, { token: admin.token, body: { ...sched, send_time: "23:59", day_of_week: 6, audience_tag: "vip" } });
    expect(u).toMatchObject({ status: 200, body: { send_time: "23:59:00", day_of_week: 6, audience_tag: "vip" } });
    expect((await t.req("DELETE", `${A}/${p.id}/scheduled/${s.id}`, { token: admin.token })).status).toBe(204);
    expect((await t.req("DELETE", `${A}/${p.id}/scheduled/${s.id}`, { token: admin.token })).status).toBe(404);
  });
  test("event push: delay defaults to 0; update; delete", async () => {
    const { p, l, e } = await systemPack(false);
    expect(e).toMatchObject({ event_code: "reg", delay_minutes: 5 });
    const noDelay = await t.req("POST", `${A}/${p.id}/languages/${l.id}/events`, { token: admin.token, body: { event_code: "dep3", title: "third" } });
    expect(noDelay).toMatchObject({ status: 201, body: { delay_minutes: 0, body: null } });
    const u = await t.req("PUT", `${A}/${p.id}/events/${e.id}`, { token: admin.token, body: { ...evt, event_code: "install" } });
    expect(u.body.event_code).toBe("install");
    expect((await t.req("DELETE", `${A}/${p.id}/events/${e.id}`, { token: admin.token })).status).toBe(204);
  });
  test("validation: 400 with a message naming the field", async () => {
    const { p, l } = await systemPack(false);
    const path = `${A}/${p.id}/languages/${l.id}/scheduled`;
    const cases: [unknown, string][] = [
      [{ ...sched, title: "" }, "title"],
      [{ ...sched, title: "   " }, "title"],
      [{ ...sched, title: "x".repeat(256) }, "title"],
      [{ ...sched, body: "x".repeat(2001) }, "body"],
      [{ ...sched, send_time: "24:00" }, "send_time"],
      [{ ...sched, send_time: "9:30" }, "send_time"],
      [{ ...sched, send_time: "12:60" }, "send_time"],
      [{ ...sched, day_of_week: 7 }, "day_of_week"],
      [{ ...sched, day_of_week: -1 }, "day_of_week"],
      [{ ...sched, title: "{A|B" }, "title"],
      [{ ...sched, body: "hello {Upper:x" }, "body"],
      [{ day_of_week: 1, send_time: "10:00" }, "title"],
      [{ title: "x", send_time: "10:00" }, "day_of_week"],
    ];
    for (const [body, field] of cases) {
      const r = await t.req("POST", path, { token: admin.token, body });
      expect(r.status).toBe(400);
      expect(r.body.error).toContain(field);
    }
    expect((await t.req("POST", path, { token: admin.token, body: { ...sched, title: "x".repeat(255), body: "y".repeat(2000) } })).status).toBe(201);
    expect((await t.req("POST", path, { token: admin.token, body: { ...sched, send_time: "00:00", day_of_week: 0 } })).status).toBe(201);
    expect((await t.req("POST", path, { token: admin.token, body: { ...sched, title: "{Push={A|B}}" } })).status).toBe(201);
    const ev = await t.req("POST", `${A}/${p.id}/languages/${l.id}/events`, { token: admin.token, body: { title: "x" } });
    expect(ev).toMatchObject({ status: 400, body: { error: "event_code is required" } });
    const neg = await t.req("POST", `${A}/${p.id}/languages/${l.id}/events`, { token: admin.token, body: { ...evt, delay_minutes: -1 } });
    expect(neg.status).toBe(400);
  });
  test("404 for a missing pack, language or push, and for items of another pack", async () => {
    const a = await systemPack(false);
    const b = await systemPack(false);
    expect((await t.req("POST", `${A}/999999/languages`, { token: admin.token, body: { language_code: "de" } })).body).toEqual({ error: "pack not found" });
    expect((await t.req("POST", `${A}/${a.p.id}/languages/999999/scheduled`, { token: admin.token, body: sched })).body).toEqual({ error: "language not found" });
    expect((await t.req("POST", `${A}/${a.p.id}/languages/${b.l.id}/events`, { token: admin.token, body: evt })).body).toEqual({ error: "language not found" });
    expect((await t.req("PUT", `${A}/${a.p.id}/scheduled/${b.s.id}`, { token: admin.token, body: sched })).body).toEqual({ error: "push not found" });
    expect((await t.req("DELETE", `${A}/${a.p.id}/events/${b.e.id}`, { token: admin.token })).body).toEqual({ error: "push not found" });
    expect((await t.req("GET", `/api/v3/push-packs/${a.p.id}/languages/${b.l.id}/events`, { token: admin.token })).status).toBe(404);
  });
});

describe("reading as a user", () => {
  test("users see own packs plus published system packs; drafts are 404", async () => {
    const draft = await systemPack(false);
    const live = await systemPack(true);
    const mine = (await t.req("POST", "/api/v3/push-packs", { token: user.token, body: { name: "mine", fallback_language: "en" } })).body;
    const list = (await t.req("GET", "/api/v3/push-packs", { token: user.token })).body.map((p: any) => p.id);
    expect(list).toContain(live.p.id);
    expect(list).toContain(mine.id);
    expect(list).not.toContain(draft.p.id);
    expect((await t.req("GET", `/api/v3/push-packs/${draft.p.id}`, { token: user.token })).status).toBe(404);
    expect((await t.req("GET", `/api/v3/push-packs/${live.p.id}`, { token: user.token })).body.id).toBe(live.p.id);
    const other = await t.user();
    expect((await t.req("GET", `/api/v3/push-packs/${mine.id}`, { token: other.token })).status).toBe(404);
    expect((await t.req("GET", "/api/v3/push-packs", { token: other.token })).body.map((p: any) => p.id)).not.toContain(mine.id);
  });
  test("system pack texts are masked for non-admins, full for admins", async () => {
    const { p, l } = await systemPack(true);
    const s = await t.req("GET", `/api/v3/push-packs/${p.id}/languages/${l.id}/scheduled`, { token: user.token });
    expect(s.status).toBe(200);
    expect(s.body[0]).toMatchObject({ title: "***", body: "***", send_time: "09:30:00", day_of_week: 1 });
    const e = await t.req("GET", `/api/v3/push-packs/${p.id}/languages/${l.id}/events`, { token: user.token });
    expect(e.body[0]).toMatchObject({ title: "***", body: "***", event_code: "reg", delay_minutes: 5 });
    const sa = await t.req("GET", `/api/v3/push-packs/${p.id}/languages/${l.id}/scheduled`, { token: admin.token });
    expect(sa.body[0].title).toBe(sched.title);
    const langs = await t.req("GET", `/api/v3/push-packs/${p.id}/languages`, { token: user.token });
    expect(langs.body).toEqual([expect.objectContaining({ id: l.id, pack_id: p.id, language_code: "en" })]);
  });
});

describe("own packs", () => {
  test("created with is_system false, is_published true, user_id the caller; full CRUD; texts not masked", async () => {
    const p = await t.req("POST", "/api/v3/push-packs", { token: user.token, body: { name: "mine", fallback_language: "en" } });
    expect(p).toMatchObject({ status: 201, body: { is_system: false, is_published: true, user_id: user.id } });
    const id = p.body.id;
    const l = (await t.req("POST", `/api/v3/push-packs/${id}/languages`, { token: user.token, body: { language_code: "pt-BR" } })).body;
    expect(l.language_code).toBe("pt-BR");
    expect((await t.req("POST", `/api/v3/push-packs/${id}/languages`, { token: user.token, body: { language_code: "pt-BR" } })).status).toBe(409);
    const s = await t.req("POST", `/api/v3/push-packs/${id}/languages/${l.id}/scheduled`, { token: user.token, body: sched });
    expect(s.status).toBe(201);
    const read = await t.req("GET", `/api/v3/push-packs/${id}/languages/${l.id}/scheduled`, { token: user.token });
    expect(read.body[0].title).toBe(sched.title);
    expect((await t.req("PUT", `/api/v3/push-packs/${id}/scheduled/${s.body.id}`, { token: user.token, body: { ...sched, title: "new" } })).body.title).toBe("new");
    const e = await t.req("POST", `/api/v3/push-packs/${id}/languages/${l.id}/events`, { token: user.token, body: evt });
    expect(e.status).toBe(201);
    expect((await t.req("PUT", `/api/v3/push-packs/${id}/events/${e.body.id}`, { token: user.token, body: evt })).status).toBe(200);
    expect((await t.req("DELETE", `/api/v3/push-packs/${id}/events/${e.body.id}`, { token: user.token })).status).toBe(204);
    expect((await t.req("PUT", `/api/v3/push-packs/${id}`, { token: user.token, body: { name: "renamed", fallback_language: "pt-BR" } })).body.name).toBe("renamed");
    expect((await t.req("DELETE", `/api/v3/push-packs/${id}`, { token: user.token })).status).toBe(204);
  });
  test("system packs through the user door: 403; another user's pack: 404; no publish", async () => {
    const { p, l, s } = await systemPack(true);
    const r = await t.req("PUT", `/api/v3/push-packs/${p.id}`, { token: user.token, body: { name: "x", fallback_language: "en" } });
    expect(r.status).toBe(403);
    expect((await t.req("DELETE", `/api/v3/push-packs/${p.id}`, { token: user.token })).status).toBe(403);
    expect((await t.req("POST", `/api/v3/push-packs/${p.id}/languages`, { token: user.token, body: { language_code: "de" } })).status).toBe(403);
    expect((await t.req("POST", `/api/v3/push-packs/${p.id}/languages/${l.id}/scheduled`, { token: user.token, body: sched })).status).toBe(403);
    expect((await t.req("DELETE", `/api/v3/push-packs/${p.id}/scheduled/${s.id}`, { token: user.token })).status).toBe(403);
    // even an administrator changes system packs through the admin door only
    expect((await t.req("PUT", `/api/v3/push-packs/${p.id}`, { token: admin.token, body: { name: "x", fallback_language: "en" } })).status).toBe(403);
    const mine = (await t.req("POST", "/api/v3/push-packs", { token: user.token, body: { name: "m", fallback_language: "en" } })).body;
    const other = await t.user();
    expect((await t.req("PUT", `/api/v3/push-packs/${mine.id}`, { token: other.token, body: { name: "x", fallback_language: "en" } })).status).toBe(404);
    expect((await t.req("PUT", `/api/v3/push-packs/${mine.id}/publish`, { token: user.token, body: { is_published: false } })).status).toBe(404);
  });
});

describe("attaching", () => {
  test("own packs and published system packs attach to own apps; listing; detaching", async () => {
    const u = await t.user();
    const app = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "web" } })).body;
    const live = await systemPack(true);
    const mine = (await t.req("POST", "/api/v3/push-packs", { token: u.token, body: { name: "m", fallback_language: "en" } })).body;
    const a1 = await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: live.p.id } });
    expect(a1).toMatchObject({ status: 201, body: { id: live.p.id, app_id: app.id } });
    const again = await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: live.p.id } });
    expect(again.status).toBe(200);
    expect((await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: mine.id } })).status).toBe(201);
    const list = await t.req("GET", `/api/v3/apps/${app.id}/push-packs`, { token: u.token });
    expect(list.body.map((p: any) => p.id).sort()).toEqual([live.p.id, mine.id].sort());
    expect((await t.req("DELETE", `/api/v3/apps/${app.id}/push-packs/${mine.id}`, { token: u.token })).status).toBe(204);
    expect((await t.req("DELETE", `/api/v3/apps/${app.id}/push-packs/${mine.id}`, { token: u.token })).status).toBe(404);
  });
  test("a draft system pack or another user's pack cannot be attached (404); nor to another user's app", async () => {
    const u = await t.user();
    const app = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "web" } })).body;
    const draft = await systemPack(false);
    const r = await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: draft.p.id } });
    expect(r).toMatchObject({ status: 404, body: { error: "pack not found" } });
    const foreign = (await t.req("POST", "/api/v3/push-packs", { token: user.token, body: { name: "f", fallback_language: "en" } })).body;
    expect((await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: foreign.id } })).status).toBe(404);
    const live = await systemPack(true);
    expect((await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: user.token, body: { pack_id: live.p.id } })).body).toEqual({ error: "app not found" });
    expect((await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: "x" } })).status).toBe(400);
  });
  test("unpublishing keeps existing attachments", async () => {
    const u = await t.user();
    const app = (await t.req("POST", "/api/v3/apps", { token: u.token, body: { name: "A", platform: "web" } })).body;
    const live = await systemPack(true);
    await t.req("POST", `/api/v3/apps/${app.id}/push-packs`, { token: u.token, body: { pack_id: live.p.id } });
    await t.req("PUT", `${A}/${live.p.id}/publish`, { token: admin.token, body: { is_published: false } });
    const list = await t.req("GET", `/api/v3/apps/${app.id}/push-packs`, { token: u.token });
    expect(list.body).toEqual([expect.objectContaining({ id: live.p.id, is_published: false })]);
  });
});
