/**
 * Property tests (fast-check). Valid templates are generated from the grammar together with a tiny
 * reference interpreter of the spec's semantics (evaluate the tree left to right, convert case over
 * whole runs of text between macro values, insert macros last); the engine must agree with it for the
 * same seed, on every device.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { bindSend, compile, render, resolveLanguage, seededRng, validateTemplate, type RenderDevice, type RenderSend, type Rng } from "./index";
import { lowerCase, timeOfDayWords, upperCase, weekdayName } from "./locale";

type Seg = { s: string; verbatim: boolean };
type Ref = (d: RenderDevice, send: RenderSend, rng: Rng, out: Seg[]) => void;
interface Gen {
  src: string;
  ref: Ref;
}

const emit = (out: Seg[], s: string, verbatim: boolean) => {
  const last = out[out.length - 1];
  if (last && last.verbatim === verbatim) last.s += s;
  else out.push({ s, verbatim });
};
const seqRef = (parts: Gen[]): Ref => (d, send, rng, out) => parts.forEach((p) => p.ref(d, send, rng, out));
const idx = (rng: Rng, n: number) => Math.min(n - 1, Math.max(0, Math.floor(rng() * n)));
const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
const pad = (n: number) => String(n).padStart(2, "0");

// Text units: written form and the text it stands for. No raw braces or pipes, no ':' or '=' (so a
// choice's text cannot turn into an operator name), characters whose case mapping is special.
const TEXT_UNITS: [string, string][] = [
  ..."ab Z,!DMYiIıİßΣσςµжЖé😀".split("").map((c): [string, string] => [c, c]),
  ["ΟΔΟΣ", "ΟΔΟΣ"],
  ["\u0307", "\u0307"],
  ["\\{", "{"],
  ["\\}", "}"],
  ["\\|", "|"],
  ["\\\\", "\\"],
  ["\\n", "\\n"],
];
const textGen: fc.Arbitrary<Gen> = fc
  .array(fc.constantFrom(...TEXT_UNITS), { minLength: 1, maxLength: 4 })
  .map((units) => {
    const value = units.map((u) => u[1]).join("");
    return { src: units.map((u) => u[0]).join(""), ref: (_d, _s, _r, out) => emit(out, value, false) };
  });

const MACROS = ["app_name", "app_id", "app_link", "external_id", "language", "country", "platform", "platform_name", "timezone"];
const macroGen: fc.Arbitrary<Gen> = fc.oneof(
  fc.constantFrom(...MACROS).map((m) => ({
    src: `{{${m}}}`,
    ref: (d: RenderDevice, send: RenderSend, _r: Rng, out: Seg[]) => {
      const app = send.app;
      const tz = Number.isFinite(d.tz_sec) ? d.tz_sec : null; // NaN or Infinity is no offset
      const v: Record<string, unknown> = { app_name: app.name, app_id: app.id, app_link: app.app_link, ...d, timezone: tz };
      emit(out, str(v[m]), true);
    },
  })),
  fc.constantFrom("vip", "level", "missing", "constructor").map((k) => ({
    src: `{{ tag:${k} }}`,
    ref: (d: RenderDevice, _s: RenderSend, _r: Rng, out: Seg[]) =>
      emit(out, d.tags && Object.hasOwn(d.tags, k) ? str(d.tags[k]) : "", true),
  })),
);

const leafGen: fc.Arbitrary<Gen> = fc.oneof(
  textGen,
  macroGen,
  fc.constant<Gen>({
    src: "{TimeOfDay}",
    ref: (d, send, _r, out) => {
      const tz = typeof d.tz_sec === "number" && Number.isFinite(d.tz_sec) ? Math.trunc(d.tz_sec) : 0;
      // offsets beyond a day wrap around (reduced first, so huge values keep their precision)
      const local = ((((Math.floor(send.now.getTime() / 1000) % 86400) + (tz % 86400)) % 86400) + 86400) % 86400;
      const h = Math.floor(local / 3600);
      const slot = h >= 6 && h <= 11 ? 0 : h >= 12 && h <= 17 ? 1 : h >= 18 && h <= 22 ? 2 : 3;
      emit(out, timeOfDayWords(resolveLanguage(d.language).lang)[slot], false);
    },
  }),
  fc.boolean().map((short) => ({
    src: short ? "{Weekday:short}" : "{Weekday}",
    ref: (d: RenderDevice, send: RenderSend, _r: Rng, out: Seg[]) =>
      emit(out, weekdayName(resolveLanguage(d.language).lang, send.now.getUTCDay(), short), false),
  })),
  fc.constantFrom("DD.MM.YYYY", "YY", "Date: DD/MM", "a\\}b").map((f) => ({
    src: `{Date:${f}}`,
    ref: (_d: RenderDevice, send: RenderSend, _r: Rng, out: Seg[]) => {
      const n = send.now;
      const value = f
        .replace("\\}", "}")
        .replace("YYYY", String(n.getUTCFullYear()))
        .replace("YY", pad(n.getUTCFullYear() % 100))
        .replace("DD", pad(n.getUTCDate()))
        .replace("MM", pad(n.getUTCMonth() + 1));
      emit(out, value, false);
    },
  })),
  fc.tuple(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: 0, max: 50 })).map(([min, span]) => ({
    src: `{Random=[${min},${min + span}]}`,
    ref: (_d: RenderDevice, _s: RenderSend, rng: Rng, out: Seg[]) => emit(out, String(min + idx(rng, span + 1)), false),
  })),
);

/** Templates up to 4 levels deep; `inPush` keeps {Push=} from nesting in itself. */
function nodeGen(depth: number, inPush: boolean): fc.Arbitrary<Gen> {
  if (depth === 0) return leafGen;
  const seq = (min: number) => fc.array(nodeGen(depth - 1, inPush), { minLength: min, maxLength: 3 });
  const variants = (inner: boolean) =>
    fc.array(fc.array(nodeGen(depth - 1, inner), { maxLength: 3 }), { minLength: 2, maxLength: 3 });
  const options: fc.Arbitrary<Gen>[] = [
    leafGen,
    variants(inPush).map((vs) => ({
      src: `{${vs.map((v) => v.map((g) => g.src).join("")).join("|")}}`,
      ref: (d: RenderDevice, s: RenderSend, rng: Rng, out: Seg[]) => seqRef(vs[idx(rng, vs.length)])(d, s, rng, out),
    })),
    fc.tuple(fc.boolean(), seq(1)).map(([upper, body]) => ({
      src: `{${upper ? "Upper" : "Lower"}:${body.map((g) => g.src).join("")}}`,
      ref: (d: RenderDevice, s: RenderSend, rng: Rng, out: Seg[]) => {
        const inner: Seg[] = [];
        seqRef(body)(d, s, rng, inner);
        const turkic = resolveLanguage(d.language).turkic;
        for (const seg of inner) emit(out, seg.verbatim ? seg.s : (upper ? upperCase : lowerCase)(seg.s, turkic), seg.verbatim);
      },
    })),
  ];
  if (!inPush)
    options.push(
      variants(true).map((vs) => ({
        src: `{Push={${vs.map((v) => v.map((g) => g.src).join("")).join("|")}}}`,
        ref: (d: RenderDevice, s: RenderSend, rng: Rng, out: Seg[]) =>
          seqRef(vs[(((Math.trunc(s.rotation) % vs.length) + vs.length) % vs.length)])(d, s, rng, out),
      })),
    );
  return fc.oneof(...options);
}
const templateGen = fc.array(nodeGen(4, false), { maxLength: 5 }).map((parts) => ({
  src: parts.map((p) => p.src).join(""),
  ref: seqRef(parts),
}));

const deviceGen: fc.Arbitrary<RenderDevice> = fc.record(
  {
    external_id: fc.oneof(fc.string(), fc.constant(null)),
    language: fc.oneof(fc.constantFrom("en", "tr", "az-AZ", "de", "ru", "hi", "pt-BR", "id", "xx", ""), fc.string(), fc.constant(null)),
    country: fc.oneof(fc.constantFrom("BR", "IN"), fc.constant(null)),
    platform: fc.constantFrom("android", "ios", "web"),
    platform_name: fc.option(fc.string()),
    tz_sec: fc.oneof(fc.integer({ min: -50400, max: 50400 }), fc.constant(null), fc.double()),
    tags: fc.option(fc.dictionary(fc.constantFrom("vip", "level", "x"), fc.string())),
  },
  { requiredKeys: [] },
);
const sendGen: fc.Arbitrary<RenderSend> = fc.record({
  now: fc.date({ min: new Date("1990-01-01T00:00:00Z"), max: new Date("2090-01-01T00:00:00Z"), noInvalidDate: true }),
  rotation: fc.integer({ min: -5, max: 1_000_000 }),
  app: fc.record({ id: fc.nat(), name: fc.string(), app_link: fc.option(fc.webUrl()) }),
});

describe("properties", () => {
  test("every generated template validates and renders as the reference semantics say", () => {
    fc.assert(
      fc.property(templateGen, fc.array(deviceGen, { minLength: 1, maxLength: 4 }), sendGen, fc.integer(), (t, devices, send, seed) => {
        expect(validateTemplate(t.src)).toEqual({ ok: true });
        const program = compile(t.src);
        const ours = seededRng(seed);
        const theirs = seededRng(seed);
        for (const d of devices) {
          const want: Seg[] = [];
          t.ref(d, send, theirs, want);
          expect(render(program, d, send, ours)).toBe(want.map((s) => s.s).join(""));
        }
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 1500) }, // FC_RUNS=50000 for a deeper search
    );
  }, 120_000);

  test("whatever validates renders without throwing, and nothing makes validation throw", () => {
    const brace = fc.constantFrom("{", "}", "|", "\\", "{{", "}}", "a", " ", ":", "=", "[", "]", ",", "1", "-", "Upper:", "Push=", "Random=", "Date:", "Weekday", "TimeOfDay", "tag:", "app_name", "Σ");
    const anyText = fc.oneof(fc.string({ unit: "binary" }), fc.array(brace, { maxLength: 30 }).map((xs) => xs.join("")));
    fc.assert(
      fc.property(anyText, deviceGen, sendGen, (src, d, send) => {
        const v = validateTemplate(src);
        if (!v.ok) {
          expect(v.position).toBeGreaterThanOrEqual(0);
          expect(v.position).toBeLessThanOrEqual(src.length);
          return;
        }
        expect(typeof render(compile(src), d, send, seededRng(1))).toBe("string");
      }),
      { numRuns: 3000 },
    );
  });

  test("every string with unbalanced braces is refused", () => {
    const unit = fc.constantFrom("{", "}", "{", "}", "|", "a", "{{", "}}", "a|b", "Upper:", "Push=");
    const balanced = (s: string) => {
      let depth = 0;
      for (const c of s) {
        if (c === "{") depth++;
        else if (c === "}" && --depth < 0) return false;
      }
      return depth === 0;
    };
    fc.assert(
      fc.property(
        fc.array(unit, { maxLength: 40 }).map((xs) => xs.join("")).filter((s) => !balanced(s)),
        (s) => expect(validateTemplate(s).ok).toBe(false),
      ),
      { numRuns: 3000 },
    );
  });

  test("rendering is deterministic for a fixed seed, by render() and by bindSend()", () => {
    fc.assert(
      fc.property(templateGen, deviceGen, sendGen, fc.integer(), (t, d, send, seed) => {
        const a = render(compile(t.src), d, send, seededRng(seed));
        const b = render(compile(t.src), d, { ...send }, seededRng(seed));
        const c = bindSend(compile(t.src), send).render(d, seededRng(seed));
        expect(b).toBe(a);
        expect(c).toBe(a);
      }),
      { numRuns: 500 },
    );
  });

  test("escaping \\ { } | makes any text a template that prints exactly that text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const escaped = s.replace(/[\\{}|]/g, (c) => "\\" + c);
        expect(render(compile(escaped), {}, { now: new Date(0), rotation: 0, app: { id: 1, name: "a" } })).toBe(s);
      }),
      { numRuns: 2000 },
    );
  });
});
