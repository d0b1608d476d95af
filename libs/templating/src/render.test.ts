import { describe, expect, test } from "bun:test";
import { bindSend, compile, render, seededRng, type RenderDevice, type RenderSend, type Rng } from "./index";

const app = { id: 77, name: "BetMax", app_link: "https://go.example/Promo?ref=AbC" };
const send: RenderSend = { now: new Date("2024-03-15T10:30:00Z"), rotation: 0, app }; // a Friday
const dev: RenderDevice = {
  external_id: "User_42",
  language: "en-US",
  country: "BR",
  platform: "android",
  platform_name: "Chrome",
  tz_sec: 0,
  tags: { vip: "Gold", level: "7" },
};
const r = (tpl: string, d: RenderDevice = dev, s: RenderSend = send, rng: Rng = seededRng(1)) => render(compile(tpl), d, s, rng);
/** A source that returns the given values in turn. */
const seq = (...xs: number[]): Rng => {
  let i = 0;
  return () => xs[i++ % xs.length];
};
/** Every output over many seeds. */
const outputs = (tpl: string, d: RenderDevice = dev, s: RenderSend = send) => {
  const p = compile(tpl);
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) seen.add(render(p, d, s, seededRng(i)));
  return seen;
};

describe("per-device random", () => {
  test("{a|b|c} picks each variant, by the rng", () => {
    expect(outputs("{a|b|c}")).toEqual(new Set(["a", "b", "c"]));
    expect(r("{a|b|c}", dev, send, seq(0))).toBe("a");
    expect(r("{a|b|c}", dev, send, seq(0.34))).toBe("b");
    expect(r("{a|b|c}", dev, send, seq(0.9999))).toBe("c");
  });
  test("variants may be empty or hold operators and macros", () => {
    expect(outputs("x{!|}")).toEqual(new Set(["x!", "x"]));
    expect(outputs("{Hi {{external_id}}|Yo}")).toEqual(new Set(["Hi User_42", "Yo"]));
  });
  test("a misbehaving rng (1, negative, NaN) still picks a variant", () => {
    for (const v of [1, -0.5, NaN, 7]) expect(["a", "b"]).toContain(r("{a|b}", dev, send, seq(v)));
  });
  test("{Random=[min,max]} is an inclusive integer range", () => {
    expect(outputs("{Random=[1,3]}")).toEqual(new Set(["1", "2", "3"]));
    expect(outputs("{Random=[-2,-1]}")).toEqual(new Set(["-2", "-1"]));
    expect(r("{Random=[7,7]}")).toBe("7");
    expect(r("{Random=[10,20]}", dev, send, seq(0))).toBe("10");
    expect(r("{Random=[10,20]}", dev, send, seq(0.99999999))).toBe("20");
    expect(r("{Random=[10,20]}", dev, send, seq(1))).toBe("20"); // clamped
    const big = Number(r("{Random=[0,999999999999999]}"));
    expect(Number.isInteger(big) && big >= 0 && big <= 999999999999999).toBe(true);
  });
  test("each recipient draws its own result", () => {
    const b = bindSend(compile("{a|b|c|d|e|f|g|h}"), send);
    const rng = seededRng(3);
    const got = new Set(Array.from({ length: 50 }, () => b.render(dev, rng)));
    expect(got.size).toBeGreaterThan(4);
  });
});

describe("{TimeOfDay} by the device offset", () => {
  const at = (utc: string, tz_sec: number | null | undefined) =>
    r("{TimeOfDay}", { language: "en", tz_sec }, { ...send, now: new Date(`2024-03-15T${utc}Z`) });
  test("hour boundaries 6-11 / 12-17 / 18-22 / 23-5", () => {
    const table: [string, string][] = [
      ["05:59:59", "night"],
      ["06:00:00", "morning"],
      ["11:59:59", "morning"],
      ["12:00:00", "afternoon"],
      ["17:59:59", "afternoon"],
      ["18:00:00", "evening"],
      ["22:59:59", "evening"],
      ["23:00:00", "night"],
      ["00:00:00", "night"],
    ];
    for (const [utc, want] of table) expect(at(utc, 0)).toBe(want);
  });
  test("offsets shift the local hour, across midnight both ways", () => {
    expect(at("10:30:00", -5 * 3600)).toBe("night"); // 05:30
    expect(at("10:30:00", 3 * 3600)).toBe("afternoon"); // 13:30
    expect(at("10:30:00", 19800)).toBe("afternoon"); // India +5:30, 16:00
    expect(at("10:30:00", 14 * 3600)).toBe("night"); // 00:30 next day
    expect(at("10:30:00", -12 * 3600)).toBe("evening"); // 22:30 the day before
  });
  test("an unset or unusable offset is UTC", () => {
    for (const tz of [null, undefined, NaN, Infinity]) expect(at("19:00:00", tz)).toBe("evening");
    expect(at("19:00:00", "3600" as unknown as number)).toBe("evening");
  });
});

describe("static per send", () => {
  test("{Date:FORMAT} tokens DD MM YYYY YY; other text kept", () => {
    expect(r("{Date:DD.MM.YYYY}")).toBe("15.03.2024");
    expect(r("{Date:YY-MM-DD}")).toBe("24-03-15");
    expect(r("{Date:Due DD/MM (YYYY, 'YY) D M Y YYYYY}")).toBe("Due 15/03 (2024, '24) D M Y 2024Y");
    expect(r("{Date:a\\}b|c}")).toBe("a}b|c");
  });
  test("{Date} and {Weekday} use the send's UTC date, whatever the device offset", () => {
    const late = { ...send, now: new Date("2024-03-15T23:30:00Z") };
    expect(r("{Date:DD} {Weekday}", { language: "en", tz_sec: 3 * 3600 }, late)).toBe("15 Friday");
  });
  test("{Weekday} and {Weekday:short} follow the device language", () => {
    expect(r("{Weekday}/{Weekday:short}", { language: "ru" })).toBe("пятница/пт");
    expect(r("{Weekday}/{Weekday:short}", { language: "pt-BR" })).toBe("sexta-feira/sex");
    expect(r("{Weekday}", {})).toBe("Friday");
  });
  test("{Push={A|B|C}} rotates A, B, C, A by the send's rotation index", () => {
    const p = compile("{Push={A|B|C}}");
    const got = [0, 1, 2, 3, 4, -1, 1.7].map((rotation) => render(p, dev, { ...send, rotation }));
    expect(got).toEqual(["A", "B", "C", "A", "B", "C", "B"]);
  });
  test("several {Push=} in one template turn in step", () => {
    expect(r("{Push={A|B}}{Push={1|2}}", dev, { ...send, rotation: 1 })).toBe("B2");
  });
});

describe("post-processing", () => {
  test("Turkish dotted and dotless i on Turkish (and Azerbaijani) devices only", () => {
    expect(r("{Upper:istanbul ılık}", { language: "tr" })).toBe("İSTANBUL ILIK");
    expect(r("{Lower:İSTANBUL IŞIK}", { language: "tr-TR" })).toBe("istanbul ışık");
    expect(r("{Upper:istanbul}", { language: "az" })).toBe("İSTANBUL");
    expect(r("{Upper:istanbul}", { language: "en" })).toBe("ISTANBUL");
    expect(r("{Lower:IŞIK}", { language: "de" })).toBe("işik");
  });
  test("German sharp s and umlauts, Cyrillic", () => {
    expect(r("{Upper:straße grüße}")).toBe("STRASSE GRÜSSE");
    expect(r("{Lower:GRÜSSE ÄÖÜ}")).toBe("grüsse äöü");
    expect(r("{Upper:привет, мир}", { language: "ru" })).toBe("ПРИВЕТ, МИР");
    expect(r("{Lower:ПРИВЕТ ЁЖ}")).toBe("привет ёж");
  });
  test("Greek final sigma sees the whole converted text, per-device parts included", () => {
    expect(r("{Lower:ΟΔΟΣ}")).toBe("οδος");
    expect(r("{Lower:ΟΔΟΣ {a|a}}")).toBe("οδος a");
    expect(r("{Lower:ΟΔΟΣ{A|A}}")).toBe("οδοσa");
    expect(r("{Lower:ΟΔΟΣ{{external_id}}}")).toBe("οδοςUser_42"); // the macro is a word boundary
  });
});

describe("macros", () => {
  test("every macro, from the app and the device", () => {
    const tpl =
      "{{app_name}}|{{app_id}}|{{app_link}}|{{external_id}}|{{language}}|{{country}}|{{platform}}|{{platform_name}}|{{timezone}}|{{tag:vip}}";
    expect(r(tpl, { ...dev, tz_sec: -10800 })).toBe("BetMax|77|https://go.example/Promo?ref=AbC|User_42|en-US|BR|android|Chrome|-10800|Gold");
  });
  test("an unset value renders as empty text", () => {
    const tpl = "[{{app_link}}|{{external_id}}|{{language}}|{{country}}|{{platform}}|{{platform_name}}|{{timezone}}|{{tag:vip}}]";
    const bare = { ...send, app: { id: 1, name: "A" } };
    expect(r(tpl, {}, bare)).toBe("[|||||||]");
    expect(r(tpl, { external_id: null, tags: null, tz_sec: null }, { ...bare, app: { id: 1, name: "A", app_link: null } })).toBe("[|||||||]");
  });
  test("tags: own keys only, spaces trimmed, numbers printed", () => {
    expect(r("[{{tag:constructor}}{{tag:__proto__}}{{tag:toString}}]", { tags: {} })).toBe("[]");
    expect(r("{{ tag : vip }}")).toBe("Gold");
    expect(r("{{tag:n}}", { tags: { n: 5 as unknown as string } })).toBe("5");
    expect(r("{{tag:o}}", { tags: { o: {} as unknown as string } })).toBe("");
  });
  test("macro values are never parsed as operators", () => {
    expect(r("{{tag:t}} {{external_id}}", { tags: { t: "{a|b}" }, external_id: "{{app_name}}" })).toBe("{a|b} {{app_name}}");
  });
  test("spaces inside the braces are allowed, as Liquid users write them", () => {
    expect(r("{{ app_name }}")).toBe("BetMax");
  });
});

describe("nesting and processing order (see README)", () => {
  test("{Upper:{a|b}}: the chosen variant is converted", () => {
    expect(outputs("{Upper:{a|b}}")).toEqual(new Set(["A", "B"]));
  });
  test("{Push={A|{x|y}}}: rotation picks per send, then the inner choice per device", () => {
    expect(outputs("{Push={A|{x|y}}}", dev, { ...send, rotation: 0 })).toEqual(new Set(["A"]));
    expect(outputs("{Push={A|{x|y}}}", dev, { ...send, rotation: 1 })).toEqual(new Set(["x", "y"]));
  });
  test("a {Push=} inside a choice, and static operators inside both", () => {
    expect(outputs("{a|{Push={x|y}}}", dev, { ...send, rotation: 1 })).toEqual(new Set(["a", "y"]));
    expect(r("{Upper:{Push={{Weekday}|x}}}", { language: "de" })).toBe("FREITAG");
  });
  test("choices nest; each level draws uniformly", () => {
    expect(outputs("{{a|b}|c}")).toEqual(new Set(["a", "b", "c"]));
    expect(r("{{a|b}|c}", dev, send, seq(0.1, 0.9))).toBe("b");
  });
  test("a macro inside Upper/Lower is inserted after conversion, unchanged", () => {
    expect(r("{Upper:hi {{external_id}}!}")).toBe("HI User_42!");
    expect(r("{Lower:OPEN {{app_link}} NOW}")).toBe("open https://go.example/Promo?ref=AbC now");
    expect(outputs("{Upper:{Hi {{external_id}}|yo}}")).toEqual(new Set(["HI User_42", "YO"]));
  });
  test("nested conversions apply inside out", () => {
    expect(r("{Lower:{Upper:a}B}")).toBe("ab");
    expect(r("{Upper:{Lower:A}b}")).toBe("AB");
    expect(r("{Upper:{Lower:İ} x}", { language: "tr" })).toBe("İ X");
  });
  test("operator output is literal text, never parsed again", () => {
    expect(r("{Push={\\{a\\|b\\}|x}}")).toBe("{a|b}");
  });
  test("a literal brace, pipe and backslash are written \\{ \\} \\| \\\\; other backslashes stay", () => {
    expect(r("\\{x\\} a|b {p\\|q|p\\|q} \\\\ C:\\path \\n")).toBe("{x} a|b p|q \\ C:\\path \\n");
    expect(r("\\{\\{app_name\\}\\}")).toBe("{{app_name}}");
  });
});

describe("binding once per send", () => {
  test("render() rebinds when the send, its instant, rotation or app change", () => {
    const p = compile("{Push={A|B}} {Date:DD} {{app_name}}");
    const s = { ...send, app: { ...app } };
    expect(render(p, dev, s)).toBe("A 15 BetMax");
    s.rotation = 1;
    expect(render(p, dev, s)).toBe("B 15 BetMax");
    s.now = new Date("2024-03-16T00:00:00Z");
    expect(render(p, dev, s)).toBe("B 16 BetMax");
    s.app.name = "Other";
    expect(render(p, dev, s)).toBe("B 16 Other");
    expect(render(p, dev, { ...s, rotation: 2 })).toBe("A 16 Other");
  });
  test("a bound template renders each language with its own words", () => {
    const b = bindSend(compile("{Weekday} {TimeOfDay}"), send);
    expect(b.render({ language: "fr" })).toBe("vendredi matin");
    expect(b.render({ language: "it" })).toBe("venerdì mattina");
    expect(b.render({ language: "fr-CA" })).toBe("vendredi matin");
  });
  test("a send without a valid instant is a TypeError naming the field", () => {
    expect(() => bindSend(compile("x"), { ...send, now: new Date("nope") })).toThrow(/send.now/);
    expect(() => render(compile("x"), dev, { ...send, now: "2024" as unknown as Date })).toThrow(TypeError);
  });
  test("a missing device renders with empty values", () => {
    expect(r("[{{external_id}}] {Weekday}", null as unknown as RenderDevice)).toBe("[] Friday");
  });
});
