/**
 * Rendering in two steps, following the spec's processing order:
 *
 * 1. bindSend(program, send): the static operators ({Date}, {Weekday}) and {Push=} rotation are
 *    resolved once per send (and per device language, lazily), app macros become constants, and
 *    {Upper}/{Lower} over constant text are folded. What is left is a tree of small closures.
 * 2. BoundTemplate.render(device, rng): per-device work only (choices, Random, TimeOfDay, device
 *    macros, case conversion of per-device text) and string concatenation.
 *
 * Macro values are inserted verbatim: never case-converted (the spec runs macros after Upper/Lower,
 * and a URL or an external id must keep its case) and never parsed (no template injection).
 * To keep that distinction inside {Upper:...}, text is tracked as two kinds while binding:
 * convertible text (literal text and operator output) and verbatim text (macro values).
 */
import type { Node, Program, MacroName, DatePart } from "./ast";
import {
  LANG_KEYS,
  lowerCase,
  resolveLanguage,
  slotOfSecond,
  timeOfDayWords,
  upperCase,
  weekdayName,
  type LangInfo,
} from "./locale";
import { fastRng, type Rng } from "./rng";

export interface RenderDevice {
  external_id?: string | null;
  language?: string | null;
  country?: string | null;
  platform?: "android" | "ios" | "web" | string | null;
  platform_name?: string | null;
  tz_sec?: number | null;
  tags?: Record<string, string> | null;
}
export interface RenderApp {
  id: number;
  name: string;
  app_link?: string | null;
}
export interface RenderSend {
  /** The send's instant. {Date} and {Weekday} use its UTC date; {TimeOfDay} shifts it by the device offset. */
  now: Date;
  /** Index for {Push={A|B|C}}: variant rotation % n. Persisting it per push is the sender's job. */
  rotation: number;
  app: RenderApp;
}

type Dev = (d: RenderDevice, rng: Rng) => string;

/** Case segments: even indexes convertible text, odd indexes verbatim (macro) text. */
class Acc {
  segs: string[] = [""];
  text(s: string): void {
    if (this.segs.length & 1) this.segs[this.segs.length - 1] += s;
    else this.segs.push(s);
  }
  verb(s: string): void {
    if (this.segs.length & 1) this.segs.push(s);
    else this.segs[this.segs.length - 1] += s;
  }
}

/** A per-device part. `verbatim`: its output contains macro text, so Upper/Lower need emit(). */
interface Dyn {
  str: Dev;
  emit: (d: RenderDevice, rng: Rng, acc: Acc) => void;
  verbatim: boolean;
}
type Piece = { t: 0; s: string } | { t: 1; s: string } | { t: 2; dyn: Dyn }; // text, verbatim, per device

interface Env {
  lang: LangInfo;
  send: SendFacts;
  /** The case conversion of the enclosing {Upper}/{Lower}, applied while binding (see "case" below). */
  conv: ((s: string) => string) | null;
}
interface SendFacts {
  dd: string;
  mm: string;
  yyyy: string;
  yy: string;
  weekday: number;
  secOfDay: number;
  rotation: number;
  app: RenderApp;
}

const pad2 = (n: number) => (n < 10 ? "0" + n : String(n));
const EMPTY_DEVICE: RenderDevice = {};

/** Index in [0, n) even from a misbehaving rng (1, negative, NaN). */
function pick(rng: Rng, n: number): number {
  const i = (rng() * n) | 0;
  return i >= n ? n - 1 : i < 0 ? 0 : i;
}

/** Device values may arrive as numbers from JSON; objects and null render as empty text. */
function text(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" || typeof v === "bigint" ? String(v) : "";
}

function push(out: Piece[], p: Piece): void {
  if (p.t !== 2) {
    // An empty macro value still separates the text around it for {Lower:} (as its {{placeholder}}
    // would in the spec's order), so only empty convertible text is dropped.
    if (p.s === "" && p.t === 0) return;
    const last = out[out.length - 1];
    if (last !== undefined && last.t === p.t) {
      out[out.length - 1] = { t: p.t, s: last.s + p.s };
      return;
    }
  }
  out.push(p);
}

function bindNodes(nodes: Node[], env: Env, out: Piece[] = []): Piece[] {
  for (const n of nodes) {
    switch (n.k) {
      case "text":
        push(out, { t: 0, s: env.conv ? env.conv(n.s) : n.s });
        break;
      case "date": {
        const s = formatDate(n.parts, env.send);
        push(out, { t: 0, s: env.conv ? env.conv(s) : s });
        break;
      }
      case "weekday": {
        const s = weekdayName(env.lang.lang, env.send.weekday, n.short);
        push(out, { t: 0, s: env.conv ? env.conv(s) : s });
        break;
      }
      case "push": {
        const r = env.send.rotation % n.variants.length;
        bindNodes(n.variants[r < 0 ? r + n.variants.length : r], env, out);
        break;
      }
      case "macro":
        if (n.name === "app_name") push(out, { t: 1, s: text(env.send.app.name) });
        else if (n.name === "app_id") push(out, { t: 1, s: text(env.send.app.id) });
        else if (n.name === "app_link") push(out, { t: 1, s: text(env.send.app.app_link) });
        else push(out, { t: 2, dyn: macroDyn(n.name, n.key) });
        break;
      case "timeOfDay":
        push(out, { t: 2, dyn: timeOfDayDyn(env) });
        break;
      case "random":
        push(out, { t: 2, dyn: randomDyn(n.min, n.max) });
        break;
      case "choice":
        push(out, { t: 2, dyn: choiceDyn(n.variants.map((v) => bindNodes(v, env))) });
        break;
      case "case": {
        const turkic = env.lang.turkic;
        const own = n.upper ? (s: string) => upperCase(s, turkic) : (s: string) => lowerCase(s, turkic);
        const outer = env.conv;
        const conv = outer ? (s: string) => outer(own(s)) : own;
        if (n.separable) {
          // Converting each part equals converting their concatenation, so convert the constants
          // and the words of per-device operators now, and nothing at render time.
          bindNodes(n.body, { ...env, conv }, out);
          break;
        }
        const body = bindNodes(n.body, { ...env, conv: null });
        if (body.some((p) => p.t === 2)) push(out, { t: 2, dyn: caseDyn(body, conv) });
        else for (const p of body) push(out, p.t === 0 ? { t: 0, s: conv(p.s) } : p);
        break;
      }
    }
  }
  return out;
}

function formatDate(parts: DatePart[], f: SendFacts): string {
  let s = "";
  for (const p of parts) s += typeof p === "string" ? p : f[p.tok === "DD" ? "dd" : p.tok === "MM" ? "mm" : p.tok === "YY" ? "yy" : "yyyy"];
  return s;
}

const join = (pieces: Piece[]) => pieces.map((p) => (p.t === 2 ? "" : p.s)).join("");

/** A sequence with at least one per-device piece. */
function seqDyn(pieces: Piece[]): Dyn {
  if (pieces.length === 1 && pieces[0].t === 2) return pieces[0].dyn;
  // Constants of both kinds merge for plain rendering (they stay apart for emit()), so the parts
  // alternate: lit[0] dyn[0] lit[1] dyn[1] ... lit[n], with "" where two per-device parts touch.
  const lit: string[] = [""];
  const dyn: Dev[] = [];
  for (const p of pieces) {
    if (p.t === 2) {
      dyn.push(p.dyn.str);
      lit.push("");
    } else lit[lit.length - 1] += p.s;
  }
  return {
    str: concat(lit, dyn),
    emit: (d, rng, acc) => emitPieces(pieces, d, rng, acc),
    verbatim: pieces.some((p) => p.t === 1 || (p.t === 2 && p.dyn.verbatim)),
  };
}

/** Fixed shapes for the common sizes: straight-line code the JIT inlines, no loop or type test. */
function concat(lit: string[], dyn: Dev[]): Dev {
  const [l0, l1, l2, l3, l4] = lit;
  const [d0, d1, d2, d3] = dyn;
  switch (dyn.length) {
    case 1:
      return (d, r) => `${l0}${d0(d, r)}${l1}`;
    case 2:
      return (d, r) => `${l0}${d0(d, r)}${l1}${d1(d, r)}${l2}`;
    case 3:
      return (d, r) => `${l0}${d0(d, r)}${l1}${d1(d, r)}${l2}${d2(d, r)}${l3}`;
    case 4:
      return (d, r) => `${l0}${d0(d, r)}${l1}${d1(d, r)}${l2}${d2(d, r)}${l3}${d3(d, r)}${l4}`;
  }
  const n = dyn.length;
  return (d, r) => {
    let s = lit[0];
    for (let i = 0; i < n; i++) s += dyn[i](d, r) + lit[i + 1];
    return s;
  };
}

function emitPieces(pieces: Piece[], d: RenderDevice, rng: Rng, acc: Acc): void {
  for (const p of pieces) {
    if (p.t === 0) acc.text(p.s);
    else if (p.t === 1) acc.verb(p.s);
    else p.dyn.emit(d, rng, acc);
  }
}

/** Leaf parts whose output is convertible text. */
function leaf(str: Dev): Dyn {
  return { str, emit: (d, rng, acc) => acc.text(str(d, rng)), verbatim: false };
}

function choiceDyn(variants: Piece[][]): Dyn {
  const n = variants.length;
  const dyns = variants.map((v) => (v.some((p) => p.t === 2) ? seqDyn(v) : null));
  const consts = variants.map(join);
  const verbatim = variants.some((v) => v.some((p) => p.t === 1 || (p.t === 2 && p.dyn.verbatim)));
  if (dyns.every((x) => x === null)) {
    const str: Dev = (_d, rng) => consts[pick(rng, n)];
    if (!verbatim) return leaf(str);
    return { str, emit: (d, rng, acc) => emitPieces(variants[pick(rng, n)], d, rng, acc), verbatim };
  }
  return {
    str: (d, rng) => {
      const i = pick(rng, n);
      const v = dyns[i];
      return v === null ? consts[i] : v.str(d, rng);
    },
    emit: (d, rng, acc) => {
      const i = pick(rng, n);
      const v = dyns[i];
      if (v === null) emitPieces(variants[i], d, rng, acc);
      else v.emit(d, rng, acc);
    },
    verbatim,
  };
}

function caseDyn(body: Piece[], conv: (s: string) => string): Dyn {
  const inner = seqDyn(body);
  if (!inner.verbatim) return leaf((d, rng) => conv(inner.str(d, rng)));
  // Macro text inside: convert only the text between macro values, each run as a whole (so
  // context-dependent mappings such as the Greek final sigma see the same neighbours).
  const segments = (d: RenderDevice, rng: Rng) => {
    const a = new Acc();
    inner.emit(d, rng, a);
    return a.segs;
  };
  return {
    str: (d, rng) => {
      const segs = segments(d, rng);
      let s = "";
      for (let i = 0; i < segs.length; i++) s += i & 1 ? segs[i] : conv(segs[i]);
      return s;
    },
    emit: (d, rng, acc) => {
      const segs = segments(d, rng);
      for (let i = 0; i < segs.length; i++) i & 1 ? acc.verb(segs[i]) : acc.text(conv(segs[i]));
    },
    verbatim: true,
  };
}

function randomDyn(min: number, max: number): Dyn {
  const span = max - min + 1; // <= 2e15 (parser limit), exact in a double
  return leaf((_d, rng) => {
    const v = min + Math.floor(rng() * span);
    return String(v > max ? max : v < min ? min : v);
  });
}

function timeOfDayDyn(env: Env): Dyn {
  const conv = env.conv;
  const words = timeOfDayWords(env.lang.lang).map((w) => (conv ? conv(w) : w));
  const base = env.send.secOfDay;
  return leaf((d) => {
    const tz = d.tz_sec;
    // finite check without a call: NaN and ±Infinity fail tz - tz === 0; unset means UTC
    let s = typeof tz === "number" && tz - tz === 0 ? base + (Math.trunc(tz) % 86400) : base;
    if (s < 0) s += 86400;
    else if (s >= 86400) s -= 86400;
    return words[slotOfSecond(s)];
  });
}

function macroDyn(name: MacroName, key: string): Dyn {
  let get: (d: RenderDevice) => string;
  switch (name) {
    case "external_id":
      get = (d) => text(d.external_id);
      break;
    case "language":
      get = (d) => text(d.language);
      break;
    case "country":
      get = (d) => text(d.country);
      break;
    case "platform":
      get = (d) => text(d.platform);
      break;
    case "platform_name":
      get = (d) => text(d.platform_name);
      break;
    case "timezone":
      get = (d) => (typeof d.tz_sec === "number" && d.tz_sec - d.tz_sec === 0 ? String(d.tz_sec) : "");
      break;
    default: // tag; own properties only, so "constructor" or "__proto__" are plain missing keys
      get = (d) => {
        const t = d.tags;
        return t != null && typeof t === "object" && Object.hasOwn(t, key) ? text(t[key]) : "";
      };
  }
  return { str: get, emit: (d, _rng, acc) => acc.verb(get(d)), verbatim: true };
}

/** A program bound to one send: render() it once per recipient. */
export class BoundTemplate {
  private readonly facts: SendFacts;
  private readonly byKey: (Dev | string | undefined)[] = new Array(LANG_KEYS);
  /** @internal what the binding was made from, to tell whether a later send is the same */
  readonly sig: [RenderSend, number, number, RenderApp, unknown, unknown, unknown];

  constructor(
    readonly program: Program,
    send: RenderSend,
  ) {
    const now = send?.now;
    const ms = now instanceof Date ? now.getTime() : NaN;
    if (Number.isNaN(ms)) throw new TypeError("send.now must be a valid Date");
    const app = send.app;
    if (app == null || typeof app !== "object") throw new TypeError("send.app must be an object");
    const dt = new Date(ms);
    const year = dt.getUTCFullYear();
    const rotation = typeof send.rotation === "number" && Number.isFinite(send.rotation) ? Math.trunc(send.rotation) : 0;
    const sec = Math.floor(ms / 1000) % 86400;
    this.facts = {
      dd: pad2(dt.getUTCDate()),
      mm: pad2(dt.getUTCMonth() + 1),
      yyyy: year >= 0 && year < 10000 ? String(year).padStart(4, "0") : String(year),
      yy: pad2(((year % 100) + 100) % 100),
      weekday: dt.getUTCDay(),
      secOfDay: sec < 0 ? sec + 86400 : sec,
      rotation,
      app,
    };
    this.sig = [send, ms, send.rotation, app, app.id, app.name, app.app_link];
  }

  render(device: RenderDevice, rng: Rng = fastRng): string {
    const d = device ?? EMPTY_DEVICE;
    const p = this.program;
    let key = 0;
    let info: LangInfo | null = null;
    if (p.usesLanguage || p.usesCase) {
      info = resolveLanguage(d.language);
      key = p.usesLanguage ? info.key : info.turkic ? 1 : 0;
    }
    let f = this.byKey[key];
    if (f === undefined) f = this.byKey[key] = this.build(info ?? resolveLanguage(null));
    return typeof f === "string" ? f : f(d, rng);
  }

  /** Same send as the one bound (identity and every field binding read). */
  matches(send: RenderSend): boolean {
    const s = this.sig;
    const app = send.app;
    const now = send.now;
    return (
      s[0] === send &&
      now instanceof Date &&
      s[1] === now.getTime() &&
      Object.is(s[2], send.rotation) &&
      s[3] === app &&
      s[4] === app.id &&
      s[5] === app.name &&
      s[6] === app.app_link
    );
  }

  private build(lang: LangInfo): Dev | string {
    const pieces = bindNodes(this.program.nodes, { lang, send: this.facts, conv: null });
    return pieces.some((x) => x.t === 2) ? seqDyn(pieces).str : join(pieces);
  }
}

export function bindSend(program: Program, send: RenderSend): BoundTemplate {
  return new BoundTemplate(program, send);
}

/**
 * Renders one recipient. Pure in effect: the output depends only on the arguments and the rng draws.
 * The binding of the last send is memoised on the program, so calling render() per recipient of a
 * send costs no more than BoundTemplate.render().
 */
export function render(program: Program, device: RenderDevice, send: RenderSend, rng: Rng = fastRng): string {
  let b = program.cache as BoundTemplate | null;
  if (b === null || !b.matches(send)) program.cache = b = new BoundTemplate(program, send);
  return b.render(device, rng);
}
