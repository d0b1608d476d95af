import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { schedulers, users } from "@pushstack/schema";
import { startTestCore, type TestCore } from "../../testing/harness";

let t: TestCore;
type U = { token: string; id: number };
let free: U;
let freeApp: { id: number };
let pro: U;
let proApp: { id: number };
let other: U;
let otherApp: { id: number };

const P = "/api/v3/pushes";

async function appOf(u: U, name = "My App", extra: Record<string, unknown> = {}) {
  const r = await t.req("POST", "/api/v3/apps", { token: u.token, body: { name, platform: "web", ...extra } });
  expect(r.status).toBe(201);
  return r.body as { id: number };
}

async function create(u: U, body: Record<string, unknown>) {
  const r = await t.req("POST", P, { token: u.token, body });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

beforeAll(async () => {
  t = await startTestCore();
  free = await t.user();
  freeApp = await appOf(free);
  pro = await t.user({ plan: "pro" });
  proApp = await appOf(pro, "Casino", { app_link: "https://casino.example/app" });
  other = await t.user();
  otherApp = await appOf(other);
});
afterAll(() => t.close());

describe("create and read", () => {
  test("translations map: codes normalised like device languages, default first in the answer", async () => {
    const r = await t.req("POST", P, {
      token: free.token,
      body: {
        app_id: freeApp.id,
        name: "  Welcome  ",
        default_language: "EN",
        translations: {
          en: { title: "Hi {{external_id}}", body: "{Good|Great} {TimeOfDay}!", icon_url: "https://cdn.example/i.png", click_url: "https://t.example/c?sub={{external_id}}" },
          PT_br: { title: "Olá", body: null, image_url: "http://cdn.example/big.jpg" },
          es: { title: "Hola", body: "" },
        },
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(Number),
      app_id: freeApp.id,
      name: "Welcome",
      default_language: "en",
      languages: ["en", "es", "pt-BR"],
      translations: {
        en: { title: "Hi {{external_id}}", body: "{Good|Great} {TimeOfDay}!", icon_url: "https://cdn.example/i.png", image_url: null, click_url: "https://t.example/c?sub={{external_id}}" },
        es: { title: "Hola", body: null, icon_url: null, image_url: null, click_url: null },
        "pt-BR": { title: "Olá", body: null, icon_url: null, image_url: "http://cdn.example/big.jpg", click_url: null },
      },
      ab_testing: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await t.req("GET", `${P}/${r.body.id}`, { token: free.token });
    expect(got).toMatchObject({ status: 200, body: r.body });
  });

  test("one-language shorthand: top-level title/body/... become the default language's translation (en unless given)", async () => {
    const a = await create(free, { app_id: freeApp.id, name: "short", title: "Bonus {{tag:offer}}", body: "Today only", click_url: "https://x.example/" });
    expect(a).toMatchObject({ default_language: "en", languages: ["en"], translations: { en: { title: "Bonus {{tag:offer}}", body: "Today only", click_url: "https://x.example/" } } });
    const b = await create(free, { app_id: freeApp.id, name: "short es", default_language: "es", title: "Hola" });
    expect(b).toMatchObject({ default_language: "es", languages: ["es"], translations: { es: { title: "Hola", body: null } } });
  });

  test("one translation needs no default_language", async () => {
    const p = await create(free, { app_id: freeApp.id, name: "one", translations: { "ru-ru": { title: "Привет" } } });
    expect(p).toMatchObject({ default_language: "ru-RU", languages: ["ru-RU"] });
  });

  test("an archived app's pushes stay readable, and new ones can be prepared", async () => {
    const u = await t.user();
    const app = await appOf(u);
    const before = await create(u, { app_id: app.id, name: "before", title: "x" });
    expect((await t.req("PATCH", `/api/v3/apps/${app.id}`, { token: u.token, body: { archived: true } })).status).toBe(200);
    expect((await t.req("GET", `${P}/${before.id}`, { token: u.token })).status).toBe(200);
    expect((await t.req("POST", P, { token: u.token, body: { app_id: app.id, name: "after", title: "y" } })).status).toBe(201);
  });

  test("anonymous callers get 401, even with a bad body", async () => {
    expect((await t.req("POST", P, { body: { translations: { es: 5 } } })).status).toBe(401);
    expect((await t.req("GET", P)).status).toBe(401);
    expect((await t.req("POST", `${P}/1/preview`, { body: {} })).status).toBe(401);
  });
});

describe("validation: 400 naming the field (and the language)", () => {
  const long = (n: number) => "x".repeat(n);
  const many = Object.fromEntries(
    Array.from({ length: 51 }, (_, i) => [String.fromCharCode(97 + Math.floor(i / 26)) + String.fromCharCode(97 + (i % 26)), { title: "t" }]),
  );
  const es = (tr: Record<string, unknown>) => ({ name: "n", default_language: "es", translations: { es: tr } });
  const cases: [string, Record<string, unknown>, string][] = [
    ["app_id missing", { app_id: undefined, name: "n", title: "t" }, "app_id is required"],
    ["name missing", { title: "t" }, "name is required"],
    ["name empty", { name: "", title: "t" }, "name must be 1 to 255 characters"],
    ["name too long", { name: long(256), title: "t" }, "name must be 1 to 255 characters"],
    ["name blank", { name: "   ", title: "t" }, "name must not be blank"],
    ["no content", { name: "n" }, "translations is required (or title, for a one-language push)"],
    ["both forms", { name: "n", title: "t", body: "b", translations: { en: { title: "t" } } }, "give either translations or the one-language fields (title, body), not both"],
    ["translations not an object", { name: "n", translations: 5 }, "translations must be an object: language code → {title, body?, icon_url?, image_url?, click_url?}"],
    ["translations an array", { name: "n", translations: [{ title: "t" }] }, "translations must be an object: language code → {title, body?, icon_url?, image_url?, click_url?}"],
    ["no language", { name: "n", translations: {} }, "translations must have at least one language"],
    ["51 languages", { name: "n", default_language: "aa", translations: many }, "translations: at most 50 languages"],
    ["bad code", { name: "n", translations: { "english!": { title: "t" } } }, 'translations: "english!" is not a language code such as en or pt-BR'],
    ["same language twice", { name: "n", default_language: "pt-BR", translations: { pt_br: { title: "a" }, "pt-BR": { title: "b" } } }, 'translations: "pt_br" and "pt-BR" are the same language (pt-BR)'],
    ["several, no default", { name: "n", translations: { en: { title: "a" }, es: { title: "b" } } }, "default_language is required when there are several translations"],
    ["default not translated", { name: "n", default_language: "de", translations: { en: { title: "a" }, es: { title: "b" } } }, "default_language de must be one of the translations (en, es)"],
    ["default not a code", { name: "n", default_language: "x!", translations: { en: { title: "a" } } }, "default_language must be a language code such as en or pt-BR"],
    ["entry not an object", { name: "n", translations: { es: "Hola" } }, "translations.es must be an object {title, body?, icon_url?, image_url?, click_url?}"],
    ["unknown field", es({ title: "t", bdy: "b" }), "translations.es.bdy: unknown field (a translation has title, body, icon_url, image_url, click_url)"],
    ["title missing", es({ body: "b" }), "translations.es.title is required"],
    ["title not a string", es({ title: 5 }), "translations.es.title must be a string"],
    ["title blank", es({ title: "  " }), "translations.es.title must not be empty"],
    ["title too long", es({ title: long(256) }), "translations.es.title must be at most 255 characters"],
    ["title unbalanced", es({ title: "{A|B" }), "translations.es.title: '{' is never closed at position 0 (near \"{A|B\"); close it with '}' or write \\{ for a literal brace"],
    ["body unmatched brace", es({ title: "t", body: "Hi}" }), "translations.es.body: unmatched '}' at position 2 (near \"}\"); write \\} for a literal brace"],
    ["body unknown operator", es({ title: "t", body: "{upper:x}" }), 'translations.es.body: unknown operator "upper" at position 0 (near "{upper:x}"); did you mean {Upper:text}?'],
    ["body not a string", es({ title: "t", body: 5 }), "translations.es.body must be a string or null"],
    ["body too long", es({ title: "t", body: long(2001) }), "translations.es.body must be at most 2000 characters"],
    ["icon_url not http", es({ title: "t", icon_url: "ftp://cdn.example/i.png" }), "translations.es.icon_url must be an http(s) URL"],
    ["image_url not a URL", es({ title: "t", image_url: "big picture" }), "translations.es.image_url must be an http(s) URL"],
    ["icon_url too long", es({ title: "t", icon_url: "https://cdn.example/" + long(2040) }), "translations.es.icon_url must be at most 2048 characters"],
    ["icon_url with a macro", es({ title: "t", icon_url: "https://cdn.example/{{external_id}}.png" }), "translations.es.icon_url must be an http(s) URL without macros (only click_url takes macros)"],
    ["click_url javascript", es({ title: "t", click_url: "javascript:alert(1)" }), "translations.es.click_url must be an http(s) URL"],
    ["click_url template not a URL", es({ title: "t", click_url: "{{tag:url}}" }), "translations.es.click_url must start with http:// or https:// and a host name (not a macro), or with {{app_link}}"],
    ["click_url host from a macro", es({ title: "t", click_url: "https://{{tag:domain}}/x" }), "translations.es.click_url must start with http:// or https:// and a host name (not a macro), or with {{app_link}}"],
    ["click_url bad macro", es({ title: "t", click_url: "https://t.example/?s={{sub}}" }), 'translations.es.click_url: unknown macro "{{sub}}" at position 21'],
    ["click_url spaces", es({ title: "t", click_url: "https://t.example/a b?s={{external_id}}" }), "translations.es.click_url must not contain spaces outside macros"],
    ["shorthand title", { name: "n", title: "{A|B" }, "title: '{' is never closed at position 0 (near \"{A|B\"); close it with '}' or write \\{ for a literal brace"],
    ["shorthand title blank", { name: "n", title: "" }, "title must not be empty"],
    ["shorthand icon_url", { name: "n", title: "t", icon_url: "cdn.example/i.png" }, "icon_url must be an http(s) URL"],
    ["shorthand body type", { name: "n", title: "t", body: 7 }, "body must be a string or null"],
  ];
  for (const [what, body, message] of cases) {
    test(what, async () => {
      const r = await t.req("POST", P, { token: free.token, body: { app_id: freeApp.id, ...body } });
      expect(r.status).toBe(400);
      // the template messages go on with a hint; everything else is the whole message
      if (message.includes("unknown macro")) expect(r.body.error).toStartWith(message);
      else expect(r.body.error).toBe(message);
    });
  }
  test("a valid click_url template: http(s) or {{app_link}} first, macros and operators after", async () => {
    for (const click_url of ["{{app_link}}?sub={{external_id}}&s={{tag:segment}}", "{{ app_link }}", "https://t.example/{a|b}?id={{external_id}}"]) {
      const r = await t.req("POST", P, { token: free.token, body: { app_id: freeApp.id, name: "c", title: "t", click_url } });
      expect(r).toMatchObject({ status: 201, body: { translations: { en: { click_url } } } });
    }
  });
  test("50 languages are fine", async () => {
    const fifty = Object.fromEntries(Object.entries(many).slice(0, 50));
    const r = await t.req("POST", P, { token: free.token, body: { app_id: freeApp.id, name: "fifty", default_language: "aa", translations: fifty } });
    expect(r.status).toBe(201);
    expect(r.body.languages).toHaveLength(50);
  });
});

describe("tenancy", () => {
  test("another account's push and app are 404; junk ids are 404", async () => {
    const mine = await create(other, { app_id: otherApp.id, name: "theirs", title: "x" });
    const calls: [string, string, unknown?][] = [
      ["GET", `${P}/${mine.id}`],
      ["PATCH", `${P}/${mine.id}`, { name: "mine now" }],
      ["DELETE", `${P}/${mine.id}`],
      ["POST", `${P}/${mine.id}/preview`, {}],
    ];
    for (const [m, path, body] of calls) expect(await t.req(m, path, { token: free.token, body })).toMatchObject({ status: 404, body: { error: "push not found" } });
    expect(await t.req("POST", P, { token: free.token, body: { app_id: otherApp.id, name: "x", title: "x" } })).toMatchObject({ status: 404, body: { error: "app not found" } });
    expect(await t.req("GET", `${P}?app_id=${otherApp.id}`, { token: free.token })).toMatchObject({ status: 404, body: { error: "app not found" } });
    const list = await t.req("GET", `${P}?limit=100`, { token: free.token });
    expect(list.body.items.some((p: { id: number }) => p.id === mine.id)).toBe(false);
    for (const junk of ["abc", "0", "-1", "99999999999"]) expect((await t.req("GET", `${P}/${junk}`, { token: free.token })).status).toBe(404);
    // still there for its owner
    expect((await t.req("GET", `${P}/${mine.id}`, { token: other.token })).status).toBe(200);
  });

  test("an app-scoped API key reaches only its app's pushes", async () => {
    const team = await t.user({ plan: "team" });
    const a1 = await appOf(team, "one");
    const a2 = await appOf(team, "two");
    const p1 = await create(team, { app_id: a1.id, name: "p1", title: "x" });
    const p2 = await create(team, { app_id: a2.id, name: "p2", title: "y" });
    const k = await t.req("POST", "/api/v3/api-keys", { token: team.token, body: { name: "app one", app_id: a1.id } });
    expect(k.status).toBe(201);
    const key = k.body.key as string;
    expect((await t.req("GET", `${P}/${p1.id}`, { token: key })).status).toBe(200);
    expect((await t.req("GET", `${P}/${p2.id}`, { token: key })).status).toBe(404);
    expect((await t.req("PATCH", `${P}/${p2.id}`, { token: key, body: { name: "z" } })).status).toBe(404);
    expect((await t.req("DELETE", `${P}/${p2.id}`, { token: key })).status).toBe(404);
    expect((await t.req("POST", `${P}/${p2.id}/preview`, { token: key, body: {} })).status).toBe(404);
    expect((await t.req("POST", P, { token: key, body: { app_id: a2.id, name: "no", title: "no" } })).status).toBe(404);
    expect((await t.req("POST", P, { token: key, body: { app_id: a1.id, name: "yes", title: "yes" } })).status).toBe(201);
    expect((await t.req("GET", `${P}?app_id=${a2.id}`, { token: key })).status).toBe(404);
    const listed = await t.req("GET", P, { token: key });
    expect(listed.status).toBe(200);
    expect(new Set(listed.body.items.map((p: { app_id: number }) => p.app_id))).toEqual(new Set([a1.id]));
    // the account's JWT sees both apps
    const all = await t.req("GET", P, { token: team.token });
    expect(new Set(all.body.items.map((p: { app_id: number }) => p.app_id))).toEqual(new Set([a1.id, a2.id]));
  });
});

describe("A/B rotation is a plan feature", () => {
  const ab = "{Push={Big bonus|Free spins}} for {{external_id}}";
  test("Free plan: 403 naming Pro, wherever the rotation hides; Pro: 201 with ab_testing", async () => {
    const where: Record<string, unknown>[] = [
      { title: ab },
      { title: "t", body: "{Upper:{Push={a|b}}}" },
      { title: "t", body: "{x|{Push={a|b}}}" },
      { title: "t", click_url: "https://t.example/?v={Push={a|b}}" },
    ];
    for (const tr of where) {
      const r = await t.req("POST", P, { token: free.token, body: { app_id: freeApp.id, name: "ab", translations: { en: tr } } });
      expect(r).toMatchObject({ status: 403, body: { error: "A/B testing requires the Pro plan or above" } });
    }
    // the text "{Push=}" written with escapes is no rotation
    expect((await t.req("POST", P, { token: free.token, body: { app_id: freeApp.id, name: "lit", title: "Type \\{Push=\\} to win" } })).status).toBe(201);
    const ok = await create(pro, { app_id: proApp.id, name: "ab", title: ab });
    expect(ok.ab_testing).toBe(true);
  });

  test("PATCH: adding rotation is gated; a downgraded account still edits the rest", async () => {
    const p = await create(free, { app_id: freeApp.id, name: "plain", title: "plain" });
    const r = await t.req("PATCH", `${P}/${p.id}`, { token: free.token, body: { translations: { es: { title: ab } } } });
    expect(r).toMatchObject({ status: 403, body: { error: "A/B testing requires the Pro plan or above" } });
    expect((await t.req("GET", `${P}/${p.id}`, { token: free.token })).body.languages).toEqual(["en"]);

    const down = await t.user({ plan: "pro" });
    const app = await appOf(down);
    const q = await create(down, { app_id: app.id, name: "ab", title: ab });
    await t.ctx.db.update(users).set({ plan: "free" }).where(eq(users.id, down.id));
    const renamed = await t.req("PATCH", `${P}/${q.id}`, { token: down.token, body: { name: "renamed", translations: { de: { title: "Hallo" } } } });
    expect(renamed).toMatchObject({ status: 200, body: { name: "renamed", ab_testing: true, languages: ["en", "de"] } });
    const again = await t.req("PATCH", `${P}/${q.id}`, { token: down.token, body: { translations: { en: { title: ab + "!" } } } });
    expect(again.status).toBe(403);
  });
});

describe("update", () => {
  test("PATCH merges translations by language: set, replace whole, remove with null; name and default", async () => {
    const p = await create(free, {
      app_id: freeApp.id,
      name: "merge",
      default_language: "en",
      translations: { en: { title: "Hi", body: "B", icon_url: "https://cdn.example/i.png" }, es: { title: "Hola" } },
    });
    t.setNow(new Date("2031-05-05T10:00:00Z"));
    try {
      const r = await t.req("PATCH", `${P}/${p.id}`, {
        token: free.token,
        body: { name: "merged", translations: { es: null, fr: { title: "Salut" }, en: { title: "Hello" } } },
      });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: "merged", default_language: "en", languages: ["en", "fr"], updated_at: "2031-05-05T10:00:00.000Z", created_at: p.created_at });
      // en was replaced as a whole: body and icon_url are gone
      expect(r.body.translations.en).toEqual({ title: "Hello", body: null, icon_url: null, image_url: null, click_url: null });
    } finally {
      t.setNow(null);
    }
    const moved = await t.req("PATCH", `${P}/${p.id}`, { token: free.token, body: { default_language: "FR", translations: { en: null } } });
    expect(moved).toMatchObject({ status: 200, body: { default_language: "fr", languages: ["fr"] } });
    // removing a language that is not there changes nothing
    expect((await t.req("PATCH", `${P}/${p.id}`, { token: free.token, body: { translations: { de: null } } })).body.languages).toEqual(["fr"]);
    expect(await t.req("GET", `${P}/${p.id}`, { token: free.token })).toMatchObject({ status: 200, body: { name: "merged", default_language: "fr" } });
  });

  test("PATCH errors", async () => {
    const p = await create(free, { app_id: freeApp.id, name: "e", default_language: "en", translations: { en: { title: "Hi" }, es: { title: "Hola" } } });
    const cases: [Record<string, unknown>, string][] = [
      [{ translations: { en: null } }, "default_language en must be one of the translations (es)"],
      [{ default_language: "de" }, "default_language de must be one of the translations (en, es)"],
      [{ translations: { en: null, es: null } }, "translations must keep at least one language"],
      [{ translations: { es: { body: "x" } } }, "translations.es.title is required"],
      [{ translations: { es: { title: "{Weekday:long}" } } }, "translations.es.title: "],
      [{ translations: "x" }, "translations must be an object: language code → {title, body?, icon_url?, image_url?, click_url?} or null"],
      [{ translations: { "e s": { title: "x" } } }, 'translations: "e s" is not a language code such as en or pt-BR'],
      [{ name: " " }, "name must not be blank"],
    ];
    for (const [body, message] of cases) {
      const r = await t.req("PATCH", `${P}/${p.id}`, { token: free.token, body });
      expect(r.status).toBe(400);
      expect(r.body.error).toStartWith(message);
    }
    // nothing changed
    expect((await t.req("GET", `${P}/${p.id}`, { token: free.token })).body).toMatchObject({ name: "e", languages: ["en", "es"], translations: { es: { title: "Hola" } } });
  });

  test("concurrent PATCHes of different languages both land (row lock)", async () => {
    const p = await create(free, { app_id: freeApp.id, name: "race", title: "x" });
    const langs = ["de", "fr", "it", "es", "pt", "ru"];
    const rs = await Promise.all(langs.map((l) => t.req("PATCH", `${P}/${p.id}`, { token: free.token, body: { translations: { [l]: { title: l } } } })));
    expect(rs.map((r) => r.status)).toEqual(langs.map(() => 200));
    const got = await t.req("GET", `${P}/${p.id}`, { token: free.token });
    expect([...got.body.languages].sort()).toEqual(["de", "en", "es", "fr", "it", "pt", "ru"]);
  });
});

describe("list", () => {
  test("newest first, keyset pages, app filter, bad parameters", async () => {
    const u = await t.user({ plan: "pro" });
    const a = await appOf(u, "a");
    const b = await appOf(u, "b");
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(u, { app_id: i < 3 ? a.id : b.id, name: `p${i}`, title: `t${i}` })).id);
    const first = await t.req("GET", `${P}?limit=2`, { token: u.token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((p: { id: number }) => p.id)).toEqual([ids[4], ids[3]]);
    const second = await t.req("GET", `${P}?limit=2&cursor=${first.body.next_cursor}`, { token: u.token });
    expect(second.body.items.map((p: { id: number }) => p.id)).toEqual([ids[2], ids[1]]);
    const third = await t.req("GET", `${P}?limit=2&cursor=${second.body.next_cursor}`, { token: u.token });
    expect(third.body).toMatchObject({ items: [{ id: ids[0] }], next_cursor: null });
    const onlyA = await t.req("GET", `${P}?app_id=${a.id}`, { token: u.token });
    expect(onlyA.body.items.map((p: { id: number }) => p.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(onlyA.body.next_cursor).toBeNull();
    const bad: [string, string][] = [
      ["limit=0", "limit must be an integer 1 to 100"],
      ["limit=101", "limit must be an integer 1 to 100"],
      ["limit=x", "limit must be an integer 1 to 100"],
      ["cursor=nope", "cursor must be the next_cursor of a previous page"],
      ["app_id=abc", "app_id must be a positive integer"],
    ];
    for (const [q, error] of bad) expect(await t.req("GET", `${P}?${q}`, { token: u.token })).toMatchObject({ status: 400, body: { error } });
  });
});

describe("delete", () => {
  test("204, then gone; 409 while a scheduler uses it", async () => {
    const p = await create(free, { app_id: freeApp.id, name: "del", title: "x" });
    expect((await t.req("DELETE", `${P}/${p.id}`, { token: free.token })).status).toBe(204);
    expect((await t.req("GET", `${P}/${p.id}`, { token: free.token })).status).toBe(404);
    expect((await t.req("DELETE", `${P}/${p.id}`, { token: free.token })).status).toBe(404);

    const used = await create(free, { app_id: freeApp.id, name: "used", title: "x" });
    const [s] = await t.ctx.db
      .insert(schedulers)
      .values({ userId: free.id, appId: freeApp.id, pushId: used.id, name: "weekly", kind: "weekly", daysOfWeek: [0], sendTime: "09:00" })
      .returning();
    const r = await t.req("DELETE", `${P}/${used.id}`, { token: free.token });
    expect(r).toMatchObject({ status: 409, body: { error: `push is used by scheduler(s) ${s!.id}: delete them or give them another push first` } });
    expect((await t.req("GET", `${P}/${used.id}`, { token: free.token })).status).toBe(200);
    await t.ctx.db.delete(schedulers).where(eq(schedulers.id, s!.id));
    expect((await t.req("DELETE", `${P}/${used.id}`, { token: free.token })).status).toBe(204);
  });
});

describe("preview", () => {
  let push: { id: number };
  beforeAll(async () => {
    push = await create(pro, {
      app_id: proApp.id,
      name: "preview",
      default_language: "en",
      translations: {
        en: {
          title: "Hi {{external_id}}, {Upper:{{tag:segment}} deal} at {{app_name}}",
          body: "{Weekday} {TimeOfDay} · {Push={A|B}} · {{country}}/{{platform}}/{{language}}",
          icon_url: "https://cdn.example/i.png",
          click_url: "{{app_link}}?sub={{external_id}}&seg={{tag:segment}}",
        },
        es: { title: "Hola {{external_id}}", body: "{Weekday} por la {TimeOfDay}" },
        "pt-BR": { title: "Olá {Upper:amigo}" },
      },
    });
  });
  const pv = (body?: unknown) => t.req("POST", `${P}/${push.id}/preview`, { token: pro.token, body });
  // 2025-01-06 is a Monday; 08:30 UTC is morning in UTC and evening at UTC+10 (18:30)
  const at = "2025-01-06T08:30:00Z";

  test("macros ({{external_id}}, {{tag:segment}}, app macros), {Upper:..} keeping macro values, static and per-device operators", async () => {
    const r = await pv({ at, device: { external_id: "u42", language: "en-US", country: "br", platform: "android", tags: { segment: "vip" } } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      language: "en",
      fallback: false,
      title: "Hi u42, vip DEAL at Casino",
      body: "Monday morning · A · BR/android/en-US",
      icon_url: "https://cdn.example/i.png",
      image_url: null,
      click_url: "https://casino.example/app?sub=u42&seg=vip",
    });
    const later = await pv({ at, rotation: 1, device: { external_id: "u42", language: "en", tz_sec: 36000 } });
    expect(later.body.body).toBe("Monday evening · B · /" + "/en");
    // an unset macro is empty text
    expect(later.body.title).toBe("Hi u42,  DEAL at Casino");
  });

  test("language: exact, primary subtag, fallback to the default", async () => {
    const cases: [Record<string, unknown>, string, boolean][] = [
      [{ device: { language: "es" } }, "es", false],
      [{ device: { language: "es-MX" } }, "es", false],
      [{ device: { language: "pt" } }, "pt-BR", false],
      [{ language: "PT_br" }, "pt-BR", false],
      [{ device: { language: "de" } }, "en", true],
      [{ language: "de", device: { language: "es" } }, "en", true],
      [{}, "en", false],
    ];
    for (const [body, language, fallback] of cases) {
      const r = await pv({ at, ...body });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ language, fallback });
    }
    const es = await pv({ at, device: { external_id: "x1", language: "es-MX" } });
    expect(es.body).toMatchObject({ title: "Hola x1", body: "lunes por la mañana", click_url: null, icon_url: null });
    const pt = await pv({ language: "pt-BR" });
    expect(pt.body).toMatchObject({ title: "Olá AMIGO", body: "" });
    // no language at all: the default translation, rendered for a device of that language
    const none = await pv();
    expect(none).toMatchObject({ status: 200, body: { language: "en", fallback: false } });
    expect(none.body.body).toEndWith("/en");
    // a German device falls back to English text but reads the weekday in German, as a send would render it
    const de = await pv({ at, device: { language: "de" } });
    expect(de.body.body).toStartWith("Montag Morgen");
  });

  test("a real device of the app (device_id): its fields, as a send job carries them", async () => {
    const reg = await t.req("POST", `/api/v3/apps/${proApp.id}/devices`, {
      token: pro.token,
      body: { external_id: "player-7", language: "es", country: "mx", tags: { segment: "whale" } },
    });
    expect(reg.status).toBe(201);
    const r = await pv({ at, device_id: reg.body.id });
    expect(r.body).toMatchObject({ language: "es", fallback: false, title: "Hola player-7", body: "lunes por la mañana" });
    const otherDevice = await t.req("POST", `/api/v3/apps/${otherApp.id}/devices`, { token: other.token, body: { external_id: "z" } });
    expect(await pv({ device_id: otherDevice.body.id })).toMatchObject({ status: 404, body: { error: "device not found" } });
  });

  test("seed makes {a|b} and {Random} repeatable", async () => {
    const p = await create(pro, { app_id: proApp.id, name: "rnd", title: "{a|b|c|d|e|f|g|h} {Random=[1,1000000]}" });
    const once = async (seed: number) => (await t.req("POST", `${P}/${p.id}/preview`, { token: pro.token, body: { seed } })).body.title as string;
    expect(await once(7)).toBe(await once(7));
    const seen = new Set<string>();
    for (let s = 0; s < 5; s++) seen.add(await once(s));
    expect(seen.size).toBeGreaterThan(1);
  });

  test("preview errors", async () => {
    const cases: [unknown, string][] = [
      [{ language: "english!" }, "language must be a language code such as en or pt-BR"],
      [{ device: { language: "??" } }, "device.language must be a language code such as en or pt-BR"],
      [{ device: { country: "b1" } }, "device.country must be a 2-letter ISO 3166-1 code"],
      [{ device: { platform: "symbian" } }, "device.platform must be one of android, ios, web"],
      [{ device: { tz_sec: 99999 } }, "device.tz_sec must be an integer offset in seconds between -43200 and 50400"],
      [{ device: { tags: "vip" } }, "device.tags must be an object of string values"],
      [{ device: {}, device_id: 1 }, "give device or device_id, not both"],
      [{ at: "yesterday" }, "at must be an ISO 8601 instant, e.g. 2025-01-31T18:00:00Z"],
      [{ rotation: -1 }, "rotation must be a non-negative integer"],
    ];
    for (const [body, error] of cases) expect(await pv(body)).toMatchObject({ status: 400, body: { error } });
  });
});
