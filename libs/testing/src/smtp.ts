import { SMTPServer } from "smtp-server";
import type { AddressInfo } from "node:net";

/**
 * A local SMTP server (the `smtp-server` package) that keeps what it receives, for tests of code that
 * sends e-mail with nodemailer. Plain SMTP on 127.0.0.1 and a free port; no STARTTLS offered, AUTH
 * optional (accepted with any credentials, recorded). `url` is what SMTP_URL takes.
 */

export interface ReceivedMail {
  /** Envelope sender and recipients (MAIL FROM / RCPT TO). */
  from: string;
  to: string[];
  /** Decoded Subject header. */
  subject: string;
  /** Decoded text body (quoted-printable or base64 undone) of a single-part message. */
  text: string;
  headers: Record<string, string>;
  raw: string;
  /** The user an AUTH command logged in as, if any. */
  user: string | null;
  at: number;
}

export interface SmtpPeer {
  url: string;
  port: number;
  messages: ReceivedMail[];
  /** Resolves with the first message (already received or arriving) that matches; rejects after timeoutMs. */
  waitFor(match?: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

function decodeWords(s: string): string {
  return s.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_m, _charset, enc, text: string) =>
    enc.toUpperCase() === "B"
      ? Buffer.from(text, "base64").toString("utf8")
      : Buffer.from(text.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_x, h) => String.fromCharCode(parseInt(h, 16))), "latin1").toString("utf8"),
  ).replace(/\?=\s+=\?/g, "");
}

function parse(raw: string) {
  const split = raw.indexOf("\r\n\r\n");
  const head = split >= 0 ? raw.slice(0, split) : raw;
  const body = split >= 0 ? raw.slice(split + 4) : "";
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const i = line.indexOf(":");
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const cte = (headers["content-transfer-encoding"] ?? "").toLowerCase();
  let text = body;
  if (cte === "quoted-printable") {
    const bytes = body.replace(/=\r\n/g, "").replace(/=([0-9A-F]{2})/gi, (_x, h) => String.fromCharCode(parseInt(h, 16)));
    text = Buffer.from(bytes, "latin1").toString("utf8");
  } else if (cte === "base64") {
    text = Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  }
  return { headers, subject: decodeWords(headers.subject ?? ""), text: text.replace(/\r\n/g, "\n") };
}

export async function startSmtpPeer(): Promise<SmtpPeer> {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<() => void>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: auth.username ?? "anonymous" });
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const envelope = session.envelope;
        const from = envelope.mailFrom ? envelope.mailFrom.address : "";
        messages.push({ from, to: envelope.rcptTo.map((r) => r.address), ...parse(raw), raw, user: (session.user as string | undefined) ?? null, at: Date.now() });
        for (const w of waiters) w();
        cb(null);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    waitFor(match = () => true, timeoutMs = 5000) {
      const found = messages.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = messages.find(match);
          if (!m) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching e-mail within ${timeoutMs} ms (${messages.length} received)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
