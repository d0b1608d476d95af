import tls from "node:tls";
import type { AddressInfo } from "node:net";
import { HpackDecoder, HpackError, encodeHeaders, type HeaderList } from "./hpack";

/**
 * A small HTTP/2 server (RFC 9113) over TLS for the test peers, written for one reason: Google's
 * front ends accept requests that nghttp2 and Bun's HTTP/2 server reset as malformed, and
 * firebase-admin sends one (`:scheme: https:` with the colon, its TODO b/401051826). A peer that
 * stands in for FCM must accept what FCM accepts, so this server validates framing, HPACK, flow
 * control and stream limits strictly, and leaves header *values* to the handler.
 *
 * Supported: SETTINGS, PING, WINDOW_UPDATE (both directions, connection and stream), HEADERS with
 * CONTINUATION/padding/priority, DATA with padding, RST_STREAM, GOAWAY, MAX_CONCURRENT_STREAMS
 * (excess streams are refused with REFUSED_STREAM as RFC 9113 5.1.2 allows, once the client has
 * acknowledged the limit, as nghttp2 does). No server push.
 */

export interface H2Request {
  streamId: number;
  method: string;
  path: string;
  scheme: string;
  authority: string;
  /** Regular headers, lower-case names; repeated names joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export interface H2Response {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export interface H2ServerOptions {
  key: string;
  cert: string;
  maxConcurrentStreams?: number;
  /** Largest request body accepted; larger streams are reset. */
  maxBodyBytes?: number;
  /** The answer, or null to leave the stream unanswered (a hung upstream, for timeout tests). */
  handler: (req: H2Request) => H2Response | null;
}

export interface H2Server {
  port: number;
  /** Connections accepted since start. */
  readonly connections: number;
  close(): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");
const enum T { DATA = 0, HEADERS = 1, PRIORITY = 2, RST_STREAM = 3, SETTINGS = 4, PUSH_PROMISE = 5, PING = 6, GOAWAY = 7, WINDOW_UPDATE = 8, CONTINUATION = 9 }
const END_STREAM = 0x1, ACK = 0x1, END_HEADERS = 0x4, PADDED = 0x8, PRIORITY_FLAG = 0x20;
const E = { NO_ERROR: 0, PROTOCOL_ERROR: 1, FLOW_CONTROL_ERROR: 3, FRAME_SIZE_ERROR: 6, REFUSED_STREAM: 7, COMPRESSION_ERROR: 9 };
const MAX_FRAME = 16384;
const OUR_STREAM_WINDOW = 1 << 20;
const OUR_CONN_WINDOW = 1 << 30;

class ConnectionError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

interface Stream {
  id: number;
  headers: HeaderList | null;
  body: Buffer[];
  bodyLen: number;
  remoteEnded: boolean;
  refused: boolean;
  sendWindow: number;
  /** Response bytes waiting for flow-control window. */
  out: Buffer | null;
}

const EMPTY = Buffer.alloc(0);

/** A frame as [9-byte header, payload]: the payload is not copied here, only once when flushed. */
function frame(type: number, flags: number, streamId: number, payload: Buffer = EMPTY): [Buffer, Buffer] {
  const h = Buffer.allocUnsafe(9);
  const len = payload.length;
  h[0] = len >>> 16;
  h[1] = (len >>> 8) & 0xff;
  h[2] = len & 0xff;
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId & 0x7fffffff, 5);
  return [h, payload];
}

/**
 * Response header blocks by status and headers: the encoder is stateless (literals without
 * indexing), so a block can be reused as is; peers answer a handful of distinct header sets.
 */
const blockCache = new Map<string, Buffer>();
const blocksByHeaders = new WeakMap<Record<string, string>, Map<number, Buffer>>();
function headerBlock(status: number, headers: Record<string, string> | undefined, contentLength: number): Buffer {
  // a handler that answers with one shared, unchanging headers object is served from here without keys
  if (headers && Object.isFrozen(headers)) {
    let m = blocksByHeaders.get(headers);
    if (!m) blocksByHeaders.set(headers, (m = new Map()));
    const k = status * 1e9 + contentLength;
    let b = m.get(k);
    if (!b) {
      b = encodedBlock(status, headers, contentLength);
      if (m.size >= 1024) m.clear();
      m.set(k, b);
    }
    return b;
  }
  return encodedBlock(status, headers, contentLength);
}
function encodedBlock(status: number, headers: Record<string, string> | undefined, contentLength: number): Buffer {
  let key = `${status}\n${contentLength}`;
  if (headers) for (const k in headers) key += `\n${k}\n${headers[k]}`;
  let block = blockCache.get(key);
  if (!block) {
    const list: HeaderList = [[":status", String(status)]];
    if (headers) for (const k in headers) list.push([k, headers[k]!]);
    list.push(["content-length", String(contentLength)]);
    block = encodeHeaders(list);
    if (blockCache.size >= 1024) blockCache.clear(); // bounded: distinct sets are few, but never grow without end
    blockCache.set(key, block);
  }
  return block;
}

class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private preface = false;
  private decoder = new HpackDecoder();
  private streams = new Map<number, Stream>();
  private active = 0;
  private lastStreamId = 0;
  private continuation: { stream: Stream; parts: Buffer[] } | null = null;
  private connSendWindow = 65535;
  private peerInitialWindow = 65535;
  private peerMaxFrame = MAX_FRAME;
  private recvUnacked = 0;
  /** Our SETTINGS take effect once acknowledged (as in nghttp2): until then streams are not refused. */
  private settingsAcked = false;
  private writes: Buffer[] = [];
  private writeBytes = 0;
  private closed = false;

  constructor(private readonly socket: tls.TLSSocket, private readonly opts: H2ServerOptions) {
    const settings = Buffer.alloc(12);
    settings.writeUInt16BE(0x3, 0);
    settings.writeUInt32BE(opts.maxConcurrentStreams ?? 100, 2);
    settings.writeUInt16BE(0x4, 6);
    settings.writeUInt32BE(OUR_STREAM_WINDOW, 8);
    this.push(frame(T.SETTINGS, 0, 0, settings));
    this.push(frame(T.WINDOW_UPDATE, 0, 0, u32(OUR_CONN_WINDOW - 65535)));
    this.flush();
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", () => this.destroy());
    socket.on("close", () => (this.closed = true));
  }

  private push([header, payload]: [Buffer, Buffer]): void {
    this.writes.push(header);
    this.writeBytes += 9;
    if (payload.length) {
      this.writes.push(payload);
      this.writeBytes += payload.length;
    }
  }

  /** One socket write per batch of input: everything answered while reading one chunk goes out together. */
  private flush(): void {
    if (this.writes.length === 0 || this.closed) return;
    const data = Buffer.concat(this.writes, this.writeBytes);
    this.writes = [];
    this.writeBytes = 0;
    this.socket.write(data);
  }

  destroy(): void {
    this.closed = true;
    this.socket.destroy();
  }

  goaway(code: number): void {
    const p = Buffer.alloc(8);
    p.writeUInt32BE(this.lastStreamId, 0);
    p.writeUInt32BE(code, 4);
    this.push(frame(T.GOAWAY, 0, 0, p));
    this.flush();
    this.socket.end();
    this.closed = true;
  }

  private onData(chunk: Buffer): void {
    const buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    let pos = 0;
    try {
      if (!this.preface) {
        if (buf.length < PREFACE.length) {
          this.buf = buf;
          return;
        }
        if (!buf.subarray(0, PREFACE.length).equals(PREFACE)) throw new ConnectionError(E.PROTOCOL_ERROR, "bad preface");
        pos = PREFACE.length;
        this.preface = true;
      }
      while (buf.length - pos >= 9 && !this.closed) {
        const len = (buf[pos]! << 16) | (buf[pos + 1]! << 8) | buf[pos + 2]!;
        if (len > MAX_FRAME) throw new ConnectionError(E.FRAME_SIZE_ERROR, "frame too large");
        if (buf.length - pos < 9 + len) break;
        const type = buf[pos + 3]!;
        const flags = buf[pos + 4]!;
        const id = buf.readUInt32BE(pos + 5) & 0x7fffffff;
        const payload = buf.subarray(pos + 9, pos + 9 + len);
        pos += 9 + len;
        this.onFrame(type, flags, id, payload);
      }
      // what is left is a partial frame: kept (copied, so the chunk it came in is not pinned) for the next read
      this.buf = pos === buf.length ? EMPTY : Buffer.from(buf.subarray(pos));
    } catch (e) {
      const code = e instanceof ConnectionError ? e.code : e instanceof HpackError ? E.COMPRESSION_ERROR : E.PROTOCOL_ERROR;
      this.goaway(code);
      return;
    }
    this.flush();
  }

  private onFrame(type: number, flags: number, id: number, p: Buffer): void {
    if (this.continuation && (type !== T.CONTINUATION || id !== this.continuation.stream.id)) {
      throw new ConnectionError(E.PROTOCOL_ERROR, "expected CONTINUATION");
    }
    switch (type) {
      case T.SETTINGS: return this.onSettings(flags, id, p);
      case T.PING:
        if (id !== 0 || p.length !== 8) throw new ConnectionError(E.PROTOCOL_ERROR, "bad PING");
        if (!(flags & ACK)) this.push(frame(T.PING, ACK, 0, p));
        return;
      case T.WINDOW_UPDATE: return this.onWindowUpdate(id, p);
      case T.HEADERS: return this.onHeaders(flags, id, p);
      case T.CONTINUATION: return this.onContinuation(flags, id, p);
      case T.DATA: return this.onDataFrame(flags, id, p);
      case T.RST_STREAM: {
        const s = this.streams.get(id);
        if (s) this.finish(s);
        return;
      }
      case T.GOAWAY:
        this.socket.end();
        return;
      case T.PUSH_PROMISE: throw new ConnectionError(E.PROTOCOL_ERROR, "client sent PUSH_PROMISE");
      default: return; // PRIORITY and unknown frame types are ignored (RFC 9113 4.1)
    }
  }

  private onSettings(flags: number, id: number, p: Buffer): void {
    if (id !== 0) throw new ConnectionError(E.PROTOCOL_ERROR, "SETTINGS on a stream");
    if (flags & ACK) {
      this.settingsAcked = true;
      return;
    }
    if (p.length % 6) throw new ConnectionError(E.FRAME_SIZE_ERROR, "bad SETTINGS length");
    for (let i = 0; i < p.length; i += 6) {
      const key = p.readUInt16BE(i);
      const value = p.readUInt32BE(i + 2);
      if (key === 0x4) {
        if (value > 0x7fffffff) throw new ConnectionError(E.FLOW_CONTROL_ERROR, "window too large");
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const s of this.streams.values()) s.sendWindow += delta;
      } else if (key === 0x5) {
        if (value < MAX_FRAME || value > 0xffffff) throw new ConnectionError(E.PROTOCOL_ERROR, "bad MAX_FRAME_SIZE");
        this.peerMaxFrame = value;
      }
    }
    this.push(frame(T.SETTINGS, ACK, 0));
    this.drain();
  }

  private onWindowUpdate(id: number, p: Buffer): void {
    if (p.length !== 4) throw new ConnectionError(E.FRAME_SIZE_ERROR, "bad WINDOW_UPDATE");
    const inc = p.readUInt32BE(0) & 0x7fffffff;
    if (id === 0) {
      if (inc === 0) throw new ConnectionError(E.PROTOCOL_ERROR, "zero window increment");
      this.connSendWindow += inc;
    } else {
      const s = this.streams.get(id);
      if (s) s.sendWindow += inc;
    }
    this.drain();
  }

  private strip(flags: number, p: Buffer, isHeaders: boolean): Buffer {
    let start = 0;
    let end = p.length;
    if (flags & PADDED) {
      const pad = p[0];
      start = 1;
      end -= pad;
    }
    if (isHeaders && flags & PRIORITY_FLAG) start += 5;
    if (end < start) throw new ConnectionError(E.PROTOCOL_ERROR, "padding exceeds payload");
    return start === 0 && end === p.length ? p : p.subarray(start, end);
  }

  private onHeaders(flags: number, id: number, p: Buffer): void {
    if (id === 0 || id % 2 === 0) throw new ConnectionError(E.PROTOCOL_ERROR, "bad stream id");
    let s = this.streams.get(id);
    if (!s) {
      if (id <= this.lastStreamId) throw new ConnectionError(E.PROTOCOL_ERROR, "stream id reused");
      this.lastStreamId = id;
      s = { id, headers: null, body: [], bodyLen: 0, remoteEnded: false, refused: false, sendWindow: this.peerInitialWindow, out: null };
      this.streams.set(id, s);
      this.active++;
      if (this.settingsAcked && this.active > (this.opts.maxConcurrentStreams ?? 100)) s.refused = true;
    }
    if (flags & END_STREAM) s.remoteEnded = true;
    const block = this.strip(flags, p, true);
    if (flags & END_HEADERS) this.onHeaderBlock(s, block);
    else this.continuation = { stream: s, parts: [Buffer.from(block)] };
  }

  private onContinuation(flags: number, id: number, p: Buffer): void {
    const c = this.continuation;
    if (!c || c.stream.id !== id) throw new ConnectionError(E.PROTOCOL_ERROR, "unexpected CONTINUATION");
    c.parts.push(Buffer.from(p));
    if (flags & END_HEADERS) {
      this.continuation = null;
      this.onHeaderBlock(c.stream, Buffer.concat(c.parts));
    }
  }

  private onHeaderBlock(s: Stream, block: Buffer): void {
    // Decoded even for refused streams: the HPACK table is connection state.
    const list = this.decoder.decode(block);
    if (s.refused) return this.reset(s, E.REFUSED_STREAM);
    if (s.headers === null) s.headers = list; // a second block is trailers: ignored
    if (s.remoteEnded) this.dispatch(s);
  }

  private onDataFrame(flags: number, id: number, p: Buffer): void {
    this.recvUnacked += p.length;
    if (this.recvUnacked > OUR_CONN_WINDOW / 2) {
      this.push(frame(T.WINDOW_UPDATE, 0, 0, u32(this.recvUnacked)));
      this.recvUnacked = 0;
    }
    const s = this.streams.get(id);
    if (!s || s.refused || s.remoteEnded) return; // closed or reset stream: data is dropped, window kept
    const data = this.strip(flags, p, false);
    s.bodyLen += data.length;
    if (s.bodyLen > (this.opts.maxBodyBytes ?? 65536) || s.bodyLen > OUR_STREAM_WINDOW) return this.reset(s, E.REFUSED_STREAM);
    if (flags & END_STREAM && s.headers) {
      // the last frame, answered before this read returns: a view of the chunk is enough
      s.body.push(data);
      s.remoteEnded = true;
      this.dispatch(s);
    } else {
      s.body.push(Buffer.from(data)); // kept across reads: copied
      if (flags & END_STREAM) s.remoteEnded = true;
    }
  }

  private reset(s: Stream, code: number): void {
    this.push(frame(T.RST_STREAM, 0, s.id, u32(code)));
    this.finish(s);
  }

  private finish(s: Stream): void {
    if (this.streams.delete(s.id)) this.active--;
  }

  private dispatch(s: Stream): void {
    const headers: Record<string, string> = {};
    const pseudo: Record<string, string> = {};
    const list = s.headers ?? [];
    for (let i = 0; i < list.length; i++) {
      const [n, v] = list[i]!;
      if (n.charCodeAt(0) === 58 /* ":" */) pseudo[n] = v;
      else headers[n] = headers[n] === undefined ? v : `${headers[n]}, ${v}`;
    }
    let res: H2Response | null;
    try {
      res = this.opts.handler({
        streamId: s.id, method: pseudo[":method"] ?? "", path: pseudo[":path"] ?? "", scheme: pseudo[":scheme"] ?? "",
        authority: pseudo[":authority"] ?? headers.host ?? "", headers, body: s.body.length === 1 ? s.body[0]! : Buffer.concat(s.body),
      });
    } catch {
      res = { status: 500, body: "" };
    }
    if (res === null) return; // never answered; the stream ends when the client resets it
    const body = res.body === undefined ? EMPTY : Buffer.isBuffer(res.body) ? res.body : Buffer.from(res.body);
    const block = headerBlock(res.status, res.headers, body.length);
    if (block.length > this.peerMaxFrame) throw new ConnectionError(E.PROTOCOL_ERROR, "response headers too large");
    this.push(frame(T.HEADERS, END_HEADERS | (body.length ? 0 : END_STREAM), s.id, block));
    if (!body.length) return this.finish(s);
    s.out = body;
    this.send(s);
  }

  /** Sends what the connection and stream windows allow of a response body. */
  private send(s: Stream): void {
    while (s.out && s.out.length) {
      const n = Math.min(s.out.length, s.sendWindow, this.connSendWindow, this.peerMaxFrame);
      if (n <= 0) return;
      const last = n === s.out.length;
      this.push(frame(T.DATA, last ? END_STREAM : 0, s.id, s.out.subarray(0, n)));
      s.sendWindow -= n;
      this.connSendWindow -= n;
      s.out = last ? null : s.out.subarray(n);
      if (last) this.finish(s);
    }
  }

  private drain(): void {
    for (const s of this.streams.values()) if (s.out) this.send(s);
  }
}

function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0, 0);
  return b;
}

export async function startH2Server(opts: H2ServerOptions): Promise<H2Server> {
  const conns = new Set<Connection>();
  let count = 0;
  const server = tls.createServer({ key: opts.key, cert: opts.cert, ALPNProtocols: ["h2"] }, (socket) => {
    count++;
    socket.setNoDelay(true); // frames are small and answered at once: no Nagle delay against delayed ACKs
    const c = new Connection(socket, opts);
    conns.add(c);
    socket.on("close", () => conns.delete(c));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return count;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const c of conns) c.goaway(E.NO_ERROR);
        server.close(() => r());
        for (const c of conns) c.destroy();
      }),
  };
}
