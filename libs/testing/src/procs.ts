/**
 * Test helpers: child processes (apps, nats-server) started and stopped by the fault tests.
 * Test-only: child processes for end-to-end and fault tests.
 */
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../../..");

export interface Child {
  proc: Bun.Subprocess<"ignore", "pipe", "inherit">;
  port: number;
  base: string;
  lines: string[];
}

/** Starts `bun <script>` with env; resolves with the port of its first `listening` log line (an info line: keep LOG_LEVEL at info). */
export async function startApp(script: string, env: Record<string, string>): Promise<Child> {
  const proc = Bun.spawn(["bun", join(ROOT, script)], { env: { ...process.env, PORT: "0", ...env }, stdout: "pipe", stderr: "inherit" });
  const lines: string[] = [];
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let port = 0;
  const deadline = Date.now() + 60_000;
  while (!port && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value);
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      try {
        const rec = JSON.parse(line);
        if (rec.msg === "listening" && rec.port) port = rec.port;
      } catch {}
    }
  }
  // keep draining so the child never blocks on a full pipe
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      lines.push(...decoder.decode(value).split("\n").filter(Boolean));
    }
  })();
  if (!port) {
    proc.kill("SIGKILL");
    throw new Error(`${script} did not start: ${lines.slice(-5).join("\n")}`);
  }
  return { proc, port, base: `http://127.0.0.1:${port}`, lines };
}

export async function waitHealthy(base: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await fetch(`${base}/healthz`).catch(() => null);
    if (r?.status === 200) return;
    if (Date.now() > end) throw new Error(`${base} never became healthy`);
    await Bun.sleep(100);
  }
}

/** A free TCP port (bound and released). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/** A nats-server with JetStream on its own port and store directory; restartable on the same port. */
export async function startNats(port: number, storeDir: string): Promise<Bun.Subprocess> {
  const proc = Bun.spawn(["nats-server", "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdout: "ignore", stderr: "ignore" });
  const end = Date.now() + 10_000;
  for (;;) {
    const ok = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => (s.end(), true),
      () => false,
    );
    if (ok) return proc;
    if (Date.now() > end) throw new Error("nats-server did not start");
    await Bun.sleep(50);
  }
}

export const hasNatsServer = () => Bun.which("nats-server") !== null;

/** JSON call helper. */
export async function call(base: string, method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: r.status, body: parsed };
}
