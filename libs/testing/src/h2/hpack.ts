/**
 * HPACK (RFC 7541) for the test HTTP/2 server: a full decoder (static and dynamic tables, Huffman
 * strings, table size updates) and a minimal encoder (literals without indexing, no Huffman),
 * which is all a server needs to answer any conforming client.
 */

export type HeaderList = [string, string][];

const STATIC_TABLE: HeaderList = [
  [":authority", ""], [":method", "GET"], [":method", "POST"], [":path", "/"], [":path", "/index.html"],
  [":scheme", "http"], [":scheme", "https"], [":status", "200"], [":status", "204"], [":status", "206"],
  [":status", "304"], [":status", "400"], [":status", "404"], [":status", "500"], ["accept-charset", ""],
  ["accept-encoding", "gzip, deflate"], ["accept-language", ""], ["accept-ranges", ""], ["accept", ""],
  ["access-control-allow-origin", ""], ["age", ""], ["allow", ""], ["authorization", ""], ["cache-control", ""],
  ["content-disposition", ""], ["content-encoding", ""], ["content-language", ""], ["content-length", ""],
  ["content-location", ""], ["content-range", ""], ["content-type", ""], ["cookie", ""], ["date", ""],
  ["etag", ""], ["expect", ""], ["expires", ""], ["from", ""], ["host", ""], ["if-match", ""],
  ["if-modified-since", ""], ["if-none-match", ""], ["if-range", ""], ["if-unmodified-since", ""],
  ["last-modified", ""], ["link", ""], ["location", ""], ["max-forwards", ""], ["proxy-authenticate", ""],
  ["proxy-authorization", ""], ["range", ""], ["referer", ""], ["refresh", ""], ["retry-after", ""],
  ["server", ""], ["set-cookie", ""], ["strict-transport-security", ""], ["transfer-encoding", ""],
  ["user-agent", ""], ["vary", ""], ["via", ""], ["www-authenticate", ""],
];

/**
 * Code lengths of the RFC 7541 Appendix B Huffman code for symbols 0..256 (256 = EOS). The code is
 * canonical (codes of one length are consecutive, in symbol order), so the lengths define it.
 */
const HUFFMAN_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

/** Canonical codes from the lengths: [code, length] per symbol. Exported for the table's own test. */
export function huffmanCodes(): [number, number][] {
  const order = HUFFMAN_LENGTHS.map((len, sym) => ({ len, sym })).sort((a, b) => a.len - b.len || a.sym - b.sym);
  const codes: [number, number][] = new Array(HUFFMAN_LENGTHS.length);
  let code = 0;
  let prevLen = order[0].len;
  for (const { len, sym } of order) {
    code *= 2 ** (len - prevLen);
    prevLen = len;
    codes[sym] = [code, len];
    code++;
  }
  return codes;
}

// Decoding tree as flat arrays: node n has children left[n]/right[n] (0 = none), sym[n] >= 0 at leaves.
const left: number[] = [0];
const right: number[] = [0];
const sym: number[] = [-1];
for (const [s, [code, len]] of huffmanCodes().entries()) {
  let n = 0;
  for (let i = len - 1; i >= 0; i--) {
    const bit = Math.floor(code / 2 ** i) % 2;
    const next = bit ? right : left;
    if (!next[n]) {
      next[n] = left.length;
      left.push(0);
      right.push(0);
      sym.push(-1);
    }
    n = next[n];
  }
  sym[n] = s;
}

export class HpackError extends Error {
  override name = "HpackError";
}

// A nibble-at-a-time decoding table over the tree (Huffman codes are at least 5 bits long, so a
// nibble ends at most one symbol): for node n and nibble v, NEXT[n * 16 + v] is the node reached
// (-1: no such code, or EOS), EMIT[n * 16 + v] the symbol completed on the way (-1: none).
// Same results as walking the tree bit by bit, a quarter of the steps.
const NEXT = new Int32Array(left.length * 16);
const EMIT = new Int32Array(left.length * 16);
for (let n = 0; n < left.length; n++) {
  for (let v = 0; v < 16; v++) {
    let cur = sym[n] >= 0 ? -1 : n; // leaves are never states
    let emit = -1;
    for (let b = 3; b >= 0 && cur >= 0; b--) {
      const child = (v >> b) & 1 ? right[cur] : left[cur];
      if (!child || sym[child] === 256) cur = -1;
      else if (sym[child] >= 0) {
        emit = sym[child];
        cur = 0;
      } else cur = child;
    }
    NEXT[n * 16 + v] = cur;
    EMIT[n * 16 + v] = cur < 0 ? -1 : emit;
  }
}
// Where a string may end: at a symbol boundary, or after 1..7 bits of padding, all ones (the EOS prefix).
const PADDING_OK = new Set<number>([0]);
for (let n = 0, k = 1; k <= 7; k++) PADDING_OK.add((n = right[n]));

export function huffmanDecode(buf: Uint8Array): string {
  const out = Buffer.allocUnsafe(Math.ceil((buf.length * 8) / 5));
  let k = 0;
  let n = 0;
  for (let i = 0; i < buf.length; i++) {
    const byte = buf[i]!;
    let t = n * 16 + (byte >> 4);
    n = NEXT[t]!;
    if (n < 0) throw new HpackError("invalid Huffman code");
    if (EMIT[t]! >= 0) out[k++] = EMIT[t]!;
    t = n * 16 + (byte & 15);
    n = NEXT[t]!;
    if (n < 0) throw new HpackError("invalid Huffman code");
    if (EMIT[t]! >= 0) out[k++] = EMIT[t]!;
  }
  if (!PADDING_OK.has(n)) throw new HpackError("invalid Huffman padding");
  return out.toString("latin1", 0, k);
}

export class HpackDecoder {
  private dynamic: HeaderList = [];
  private size = 0;
  constructor(private maxSize = 4096) {}

  private entry(index: number): [string, string] {
    if (index >= 1 && index <= STATIC_TABLE.length) return STATIC_TABLE[index - 1];
    const e = this.dynamic[index - STATIC_TABLE.length - 1];
    if (!e || index < 1) throw new HpackError(`header index ${index} out of range`);
    return e;
  }

  private add(name: string, value: string): void {
    const s = name.length + value.length + 32;
    this.dynamic.unshift([name, value]);
    this.size += s;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.maxSize && this.dynamic.length) {
      const [n, v] = this.dynamic.pop()!;
      this.size -= n.length + v.length + 32;
    }
  }

  decode(buf: Buffer): HeaderList {
    const headers: HeaderList = [];
    let pos = 0;
    const int = (prefixBits: number): number => {
      const max = (1 << prefixBits) - 1;
      let v = buf[pos++] & max;
      if (v < max) return v;
      let m = 0;
      let b: number;
      do {
        if (pos >= buf.length) throw new HpackError("truncated integer");
        b = buf[pos++];
        v += (b & 0x7f) * 2 ** m;
        m += 7;
        if (m > 28) throw new HpackError("integer too large");
      } while (b & 0x80);
      return v;
    };
    const str = (): string => {
      if (pos >= buf.length) throw new HpackError("truncated string");
      const huff = (buf[pos] & 0x80) !== 0;
      const len = int(7);
      if (pos + len > buf.length) throw new HpackError("truncated string");
      const raw = buf.subarray(pos, pos + len);
      pos += len;
      return huff ? huffmanDecode(raw) : raw.toString("latin1");
    };
    while (pos < buf.length) {
      const b = buf[pos];
      if (b & 0x80) {
        headers.push(this.entry(int(7)));
      } else if (b & 0x40) {
        const idx = int(6);
        const name = idx ? this.entry(idx)[0] : str();
        const value = str();
        this.add(name, value);
        headers.push([name, value]);
      } else if (b & 0x20) {
        const size = int(5);
        if (size > 4096) throw new HpackError("table size update above the advertised limit");
        this.maxSize = size;
        this.evict();
      } else {
        const idx = int(4); // without indexing (0000) or never indexed (0001)
        const name = idx ? this.entry(idx)[0] : str();
        headers.push([name, str()]);
      }
    }
    return headers;
  }
}

function encodeInt(out: Buffer, pos: number, value: number, prefixBits: number, first: number): number {
  const max = (1 << prefixBits) - 1;
  if (value < max) {
    out[pos++] = first | value;
    return pos;
  }
  out[pos++] = first | max;
  value -= max;
  while (value >= 128) {
    out[pos++] = (value % 128) + 128;
    value = Math.floor(value / 128);
  }
  out[pos++] = value;
  return pos;
}

/** Literal header fields without indexing, new names, raw strings: stateless by design. */
export function encodeHeaders(headers: HeaderList): Buffer {
  let cap = 0;
  for (const [name, value] of headers) cap += 1 + 5 + name.length + 5 + value.length;
  const out = Buffer.allocUnsafe(cap);
  let pos = 0;
  for (const [name, value] of headers) {
    out[pos++] = 0;
    const n = name.toLowerCase();
    pos = encodeInt(out, pos, n.length, 7, 0);
    pos += out.write(n, pos, "latin1");
    pos = encodeInt(out, pos, value.length, 7, 0);
    pos += out.write(value, pos, "latin1");
  }
  return out.subarray(0, pos);
}
