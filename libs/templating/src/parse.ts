/**
 * compile(): one left-to-right pass over the template, building the tree in ast.ts.
 *
 * Linear time by construction: no regular expressions, no backtracking except the bounded look-ahead
 * that tells a macro `{{name}}` from two nested braces, and nesting capped at MAX_DEPTH so hostile
 * input ("{{{{…", "{a|{a|{a|…") fails fast with a clear error instead of recursing.
 * Grammar and nesting rules: see README.md.
 */
import { MACRO_NAMES, type DatePart, type MacroName, type Node, type Program } from "./ast";
import { TemplateError } from "./errors";

export const MAX_DEPTH = 16;
const MAX_MACRO_NAME = 64;
const MAX_TAG_KEY = 256;
/** 15 digits keep max - min + 1 below 2^53, so a uniform draw stays exact. */
const MAX_RANDOM_DIGITS = 15;

const LB = 123; // {
const RB = 125; // }
const PIPE = 124; // |
const BSL = 92; // \

const USAGE: Record<string, string> = {
  Random: "{Random=[min,max]}",
  TimeOfDay: "{TimeOfDay}",
  Date: "{Date:FORMAT}",
  Weekday: "{Weekday} or {Weekday:short}",
  Push: "{Push={A|B}}",
  Upper: "{Upper:text}",
  Lower: "{Lower:text}",
};
const KNOWN = "{a|b|c}, " + Object.values(USAGE).join(", ");
const macroUsage = (m: string) => (m === "tag" ? "{{tag:key}}" : `{{${m}}}`);

export function compile(template: string): Program {
  if (typeof template !== "string") throw new TemplateError("template must be a string", 0);
  const p = new Parser(template);
  const nodes = p.seq(0, false, -1);
  return { source: template, nodes, usesLanguage: p.usesLanguage, usesCase: p.usesCase, cache: null };
}

export function validateTemplate(
  template: string,
): { ok: true } | { ok: false; error: string; position: number } {
  try {
    compile(template);
    return { ok: true };
  } catch (e) {
    if (e instanceof TemplateError) return { ok: false, error: e.message, position: e.position };
    throw e; // a bug in the parser, not bad input: let it surface
  }
}

const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdent = (c: number) => isIdentStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number) => c >= 48 && c <= 57;
const isSpace = (c: number) => c === 32 || c === 9;

class Parser {
  i = 0;
  usesLanguage = false;
  usesCase = false;
  private inPush = false;

  constructor(private readonly src: string) {}

  /** "<what> at position <pos> (near "<text>")[; <hint>]": what is wrong, where, and what to write. */
  private fail(what: string, pos: number, hint = ""): never {
    let near = this.src.slice(pos, pos + 24);
    if (pos + 24 < this.src.length) near += "…";
    throw new TemplateError(`${what} at position ${pos} (near ${JSON.stringify(near)})${hint ? "; " + hint : ""}`, pos);
  }

  /**
   * Text and operators until the end (depth 0) or until an unescaped '}' (and '|' inside a choice),
   * which is left for the caller. `open` is the position of the innermost '{', for the error.
   */
  seq(depth: number, inChoice: boolean, open: number): Node[] {
    const src = this.src;
    const n = src.length;
    const nodes: Node[] = [];
    let text = "";
    let run = this.i;
    while (this.i < n) {
      const c = src.charCodeAt(this.i);
      if (c === BSL) {
        const next = src.charCodeAt(this.i + 1);
        if (next === LB || next === RB || next === PIPE || next === BSL) {
          text += src.slice(run, this.i) + src[this.i + 1];
          this.i += 2;
          run = this.i;
        } else this.i++; // any other backslash is plain text
      } else if (c === LB) {
        text += src.slice(run, this.i);
        if (text !== "") nodes.push({ k: "text", s: text });
        text = "";
        nodes.push(this.group(depth));
        run = this.i;
      } else if (c === RB) {
        if (depth === 0) this.fail("unmatched '}'", this.i, "write \\} for a literal brace");
        break;
      } else if (c === PIPE && inChoice) break;
      else this.i++;
    }
    if (this.i >= n && depth > 0) this.fail("'{' is never closed", open, "close it with '}' or write \\{ for a literal brace");
    text += src.slice(run, this.i);
    if (text !== "") nodes.push({ k: "text", s: text });
    return nodes;
  }

  /** At a '{': a macro, an operator, or a choice. */
  private group(depth: number): Node {
    const src = this.src;
    const start = this.i;
    if (src.charCodeAt(start + 1) === LB) {
      const m = this.macro(start);
      if (m) return m;
    }
    const d = depth + 1;
    if (d > MAX_DEPTH) this.fail(`operators nested more than ${MAX_DEPTH} deep`, start);
    const at = start + 1;
    this.i = at;
    if (src.startsWith("TimeOfDay}", at)) {
      this.i = at + 10;
      this.usesLanguage = true;
      return { k: "timeOfDay" };
    }
    if (src.startsWith("Weekday}", at) || src.startsWith("Weekday:short}", at)) {
      const short = src.charCodeAt(at + 7) === 58;
      this.i = at + (short ? 14 : 8);
      this.usesLanguage = true;
      return { k: "weekday", short };
    }
    if (src.startsWith("Weekday:", at)) this.fail("unknown Weekday option", at + 8, "write {Weekday} or {Weekday:short}");
    if (src.startsWith("Random=", at)) return this.random(start);
    if (src.startsWith("Date:", at)) return this.date(start);
    if (src.startsWith("Push=", at)) return this.push(start, d);
    if (src.startsWith("Upper:", at) || src.startsWith("Lower:", at)) {
      const upper = src.charCodeAt(at) === 85;
      this.i = at + 6;
      const body = this.seq(d, false, start);
      if (body.length === 0) this.fail(`empty {${upper ? "Upper" : "Lower"}:} text`, start, "write the text to convert after ':'");
      this.close(start);
      this.usesCase = true;
      return { k: "case", upper, body, separable: upper || !hasContextualLower(src, start, this.i) };
    }
    const variants = this.variants(d, start);
    if (variants.length >= 2) return { k: "choice", variants };
    return this.badGroup(start);
  }

  /** After a '{' of a choice: variants split on '|' up to and including the closing '}'. */
  private variants(depth: number, open: number): Node[][] {
    const out: Node[][] = [];
    for (;;) {
      out.push(this.seq(depth, true, open));
      const c = this.src.charCodeAt(this.i++); // '|' or '}': seq() failed on the end of input
      if (c === RB) return out;
    }
  }

  private close(open: number): void {
    const c = this.src.charCodeAt(this.i);
    if (c === RB) this.i++;
    else if (this.i >= this.src.length) this.fail("'{' is never closed", open);
    else this.fail("expected '}'", this.i, "an operator ends right after its argument");
  }

  private random(start: number): Node {
    const src = this.src;
    this.i = start + 8; // "{Random="
    if (src.charCodeAt(this.i) !== 91 /* [ */) this.fail("expected '['", this.i, "write {Random=[min,max]}");
    this.i++;
    const minPos = this.skipSpaces();
    const min = this.integer();
    this.skipSpaces();
    if (src.charCodeAt(this.i) !== 44 /* , */) this.fail("expected ',' between Random min and max", this.i, "write {Random=[min,max]}");
    this.i++;
    this.skipSpaces();
    const max = this.integer();
    this.skipSpaces();
    if (src.charCodeAt(this.i) !== 93 /* ] */) this.fail("expected ']' after Random max", this.i, "write {Random=[min,max]}");
    this.i++;
    this.close(start);
    if (min > max) this.fail(`Random min ${min} is greater than max ${max}`, minPos);
    return { k: "random", min, max };
  }

  private skipSpaces(): number {
    while (isSpace(this.src.charCodeAt(this.i))) this.i++;
    return this.i;
  }

  private integer(): number {
    const src = this.src;
    const pos = this.i;
    const c0 = src.charCodeAt(pos);
    if (c0 === 45 || c0 === 43) this.i++; // - +
    const digits = this.i;
    while (isDigit(src.charCodeAt(this.i)) && this.i - digits <= MAX_RANDOM_DIGITS) this.i++;
    if (this.i === digits) this.fail("expected an integer in {Random=[min,max]}", pos, "write e.g. {Random=[1,10]}");
    if (this.i - digits > MAX_RANDOM_DIGITS) this.fail(`Random bounds must have at most ${MAX_RANDOM_DIGITS} digits`, pos);
    if (src.charCodeAt(this.i) === 46 /* . */) this.fail("Random bounds must be whole numbers", pos);
    return Number(src.slice(pos, this.i));
  }

  private date(start: number): Node {
    const src = this.src;
    this.i = start + 6; // "{Date:"
    let fmt = "";
    for (;;) {
      const c = src.charCodeAt(this.i);
      if (this.i >= src.length) this.fail("'{' is never closed", start);
      if (c === RB) break;
      if (c === LB) this.fail("'{' inside a Date format", this.i, "a format has only DD, MM, YYYY, YY and plain text; write \\{ for a literal brace");
      if (c === BSL) {
        const next = src.charCodeAt(this.i + 1);
        if (next === LB || next === RB || next === PIPE || next === BSL) {
          fmt += src[this.i + 1];
          this.i += 2;
          continue;
        }
      }
      fmt += src[this.i++];
    }
    this.i++;
    if (fmt === "") this.fail("empty Date format", start, "write e.g. {Date:DD.MM.YYYY}");
    return { k: "date", parts: dateParts(fmt) };
  }

  private push(start: number, depth: number): Node {
    if (this.inPush) this.fail("{Push=...} cannot be nested inside another {Push=...}", start);
    const open = start + 6; // "{Push="
    if (this.src.charCodeAt(open) !== LB) this.fail("expected '{' after 'Push='", open, "write {Push={A|B}}");
    if (depth + 1 > MAX_DEPTH) this.fail(`operators nested more than ${MAX_DEPTH} deep`, open);
    this.i = open + 1;
    this.inPush = true;
    const variants = this.variants(depth + 1, open);
    this.inPush = false;
    if (variants.length < 2) this.fail("{Push={...}} with one variant", open, "separate at least two variants with '|', as in {Push={A|B}}");
    this.close(start);
    return { k: "push", variants };
  }

  /**
   * `{{name}}` or `{{tag:key}}`, spaces allowed inside the braces; null when the text is not shaped
   * like a macro (then the braces are two nested groups, e.g. `{{a|b}|c}`). A tag key holds no
   * brace or backslash, so `{{X:key}}` is never the start of valid operator text. The look-ahead is
   * bounded by the name and key limits, and stops at the first brace, so it never rescans.
   */
  private macro(start: number): Node | null {
    const src = this.src;
    let j = start + 2;
    while (isSpace(src.charCodeAt(j))) j++;
    const nameAt = j;
    if (!isIdentStart(src.charCodeAt(j))) return null;
    while (isIdent(src.charCodeAt(j)) && j - nameAt <= MAX_MACRO_NAME) j++;
    if (j - nameAt > MAX_MACRO_NAME) return null;
    const name = src.slice(nameAt, j);
    while (isSpace(src.charCodeAt(j))) j++;
    let key: string | null = null;
    const colon = j;
    if (src.charCodeAt(j) === 58 /* : */) {
      const keyAt = ++j;
      for (; j < src.length && j - keyAt <= MAX_TAG_KEY; j++) {
        const c = src.charCodeAt(j);
        if (c === LB || c === RB) break;
        // an escape means operator text, as in `{{Lower:\}}|x}`; tag keys never contain one
        if (c === BSL) return null;
      }
      if (src.charCodeAt(j) !== RB) return null;
      key = src.slice(keyAt, j).trim();
    }
    while (isSpace(src.charCodeAt(j))) j++;
    if (src.charCodeAt(j) !== RB || src.charCodeAt(j + 1) !== RB) return null;
    if (!(MACRO_NAMES as readonly string[]).includes(name)) {
      const hint = suggest(name, MACRO_NAMES);
      this.fail(
        `unknown macro "{{${name}}}"`,
        start,
        hint ? `did you mean ${macroUsage(hint)}?` : `known macros: ${MACRO_NAMES.map(macroUsage).join(", ")}`,
      );
    }
    if (name === "tag" && !key) this.fail("{{tag}} without a key", key === null ? colon : colon + 1, "write {{tag:KEY}}");
    if (name !== "tag" && key !== null) this.fail(`macro {{${name}}} takes no ':' argument`, colon, `write {{${name}}}`);
    this.i = j + 2;
    return { k: "macro", name: name as MacroName, key: key ?? "" };
  }

  /** A '{' that parsed as a choice of one variant: explain what it probably was. */
  private badGroup(start: number): never {
    const src = this.src;
    if (src.charCodeAt(start + 1) === RB) this.fail("empty braces '{}'", start, "write \\{\\} for literal braces");
    let j = start + 1;
    while (isIdent(src.charCodeAt(j)) && j - start <= 32) j++;
    const name = src.slice(start + 1, j);
    if (name !== "" && USAGE[name]) this.fail(`malformed {${name}...}`, start, `write ${USAGE[name]}`);
    if (name !== "" && isIdentStart(name.charCodeAt(0))) {
      const op = suggest(name, Object.keys(USAGE));
      const mac = op ? null : suggest(name, MACRO_NAMES);
      const hint = op
        ? `did you mean ${USAGE[op]}?`
        : mac
          ? `did you mean the macro ${macroUsage(mac)}?`
          : `known operators: ${KNOWN}; write \\{ for a literal brace`;
      this.fail(`unknown operator "${name}"`, start, hint);
    }
    this.fail("a choice with one variant", start, "separate variants with '|', as in {a|b}, or write \\{ for a literal brace");
  }
}

/** Greek letters (final sigma) or U+0307 (Turkic I + dot) in src[from, to): lower-casing depends on neighbours. */
function hasContextualLower(src: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = src.charCodeAt(i);
    if ((c >= 0x370 && c <= 0x3ff) || (c >= 0x1f00 && c <= 0x1fff) || c === 0x307) return true;
  }
  return false;
}

/** Tokens DD, MM, YYYY, YY (longest first); everything else is kept as written. */
function dateParts(fmt: string): DatePart[] {
  const parts: DatePart[] = [];
  let lit = "";
  for (let i = 0; i < fmt.length; ) {
    const tok = fmt.startsWith("YYYY", i)
      ? "YYYY"
      : fmt.startsWith("YY", i)
        ? "YY"
        : fmt.startsWith("DD", i)
          ? "DD"
          : fmt.startsWith("MM", i)
            ? "MM"
            : null;
    if (tok) {
      if (lit) parts.push(lit);
      lit = "";
      parts.push({ tok });
      i += tok.length;
    } else lit += fmt[i++];
  }
  if (lit) parts.push(lit);
  return parts;
}

/** The known name a typo most likely meant: same letters ignoring case, or at most 2 edits away. */
function suggest(name: string, known: readonly string[]): string | null {
  const low = name.toLowerCase();
  let best: string | null = null;
  let bestD = 3;
  for (const k of known) {
    const d = k.toLowerCase() === low ? 0 : name.length > 32 ? 3 : editDistance(low, k.toLowerCase());
    if (d < bestD && (d === 0 || name.length >= 4)) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}
