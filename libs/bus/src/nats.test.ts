/**
 * NatsBus only: surviving a NATS restart. Runs when NATS_URL is set and a nats-server binary is
 * on PATH; it starts its own server (own port, own store directory) so it can kill it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BusUnavailable, createNatsBus, type NatsBus } from "./index";
import { rejection, text, uniquePrefix, waitFor } from "./testkit";

const serverBin = Bun.which("nats-server");
const enabled = !!process.env.NATS_URL && !!serverBin;

function freePort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

describe.if(enabled)("NatsBus across a server restart", () => {
  let store = "";
  let port = 0;
  let server: ReturnType<typeof Bun.spawn> | null = null;
  const start = async () => {
    if (!store) {
      store = mkdtempSync(join(tmpdir(), "bus-nats-"));
      port = freePort();
    }
    server = Bun.spawn([serverBin!, "-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store], { stdout: "ignore", stderr: "ignore" });
    await waitFor(async () => {
      try {
        await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {}, open(s) { s.end(); } } });
        return true;
      } catch {
        return false;
      }
    }, "nats-server to listen", 10_000);
  };
  const stop = async () => {
    server?.kill("SIGKILL");
    await server?.exited;
    server = null;
  };
  afterAll(async () => {
    await stop();
    if (store) rmSync(store, { recursive: true, force: true });
  });

  test("fails fast while NATS is down, then recovers by itself", async () => {
    await start();
    const bus: NatsBus = await createNatsBus({ url: `nats://127.0.0.1:${port}`, prefix: uniquePrefix("rs") });
    await bus.ensureStream({ name: "JOBS", subjects: ["jobs.>"] });
    const got: string[] = [];
    await bus.consume({ stream: "JOBS", durable: "w", ackWaitMs: 1000 }, (m) => {
      got.push(text(m.data));
      m.ack();
    });
    await bus.reply("svc.ping", () => "pong");
    await bus.publish("jobs.a", "before");
    await waitFor(() => got.includes("before"), "delivery before the restart");

    // Publishes in flight when the server dies settle (acked or BusUnavailable), none hangs.
    const burst = Array.from({ length: 5000 }, (_, i) => bus.publish("jobs.b", String(i)).then(() => "ok", (e: Error) => e.name));
    await stop();
    const t = Date.now();
    const outcomes = await Promise.all(burst);
    expect(Date.now() - t).toBeLessThan(2500);
    expect(outcomes.filter((o) => o !== "ok" && o !== "BusUnavailable")).toEqual([]);

    await waitFor(() => !bus.isConnected(), "disconnect noticed", 2000);
    const down = await rejection(bus.publish("jobs.a", "while down"));
    expect(down.err).toBeInstanceOf(BusUnavailable);
    expect(down.ms).toBeLessThan(2000);

    await start();
    await waitFor(() => bus.isConnected(), "reconnect", 15_000);
    await waitFor(async () => {
      try {
        await bus.publish("jobs.a", "after", { msgId: "after" }); // JetStream may need a moment after start
        return true;
      } catch {
        return false;
      }
    }, "publish after the restart", 10_000);
    await waitFor(() => got.includes("after"), "delivery after the restart", 15_000);
    expect(text(await bus.request("svc.ping", "x"))).toBe("pong");
    await bus.close();
  }, 60_000);
});
