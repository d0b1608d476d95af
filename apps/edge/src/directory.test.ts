import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createBus, type Bus } from "@pushstack/bus";
import { silentLogger } from "@pushstack/config";
import { IngestSubjects, Subjects, type AppDirectoryEntry } from "@pushstack/schema";
import { AppDirectory, DirectoryUnavailable } from "./directory";

let bus: Bus;
beforeAll(async () => {
  bus = await createBus({ natsUrl: process.env.NATS_URL, prefix: `td${randomBytes(4).toString("hex")}` });
});
afterAll(() => bus.close());

const entry = (id: number, over: Partial<AppDirectoryEntry> = {}): AppDirectoryEntry => ({
  id, user_id: 1, archived: false, postback_token: `tok${id}`, platform: "web", plan: "free", subscription_status: "active", updated_at: new Date().toISOString(), ...over,
});

async function until(cond: () => boolean) {
  for (let i = 0; i < 500 && !cond(); i++) await Bun.sleep(10);
  expect(cond()).toBe(true);
}

test("replays the bucket, then follows puts and deletes; malformed entries are ignored", async () => {
  const kv = await bus.kv(Subjects.appDirectoryBucket);
  await kv.put("1", JSON.stringify(entry(1)));
  await kv.put("2", JSON.stringify(entry(2)));
  await kv.put("3", "{not json");
  const dir = new AppDirectory(() => bus, silentLogger);
  await dir.start();
  try {
    expect(dir.ready).toBe(true);
    expect(dir.known(1)?.postback_token).toBe("tok1");
    expect(dir.known(3)).toBeUndefined();
    await kv.put("4", JSON.stringify(entry(4)));
    await kv.put("1", JSON.stringify(entry(1, { archived: true })));
    await kv.delete("2");
    await until(() => !!dir.known(4) && dir.known(1)?.archived === true && !dir.known(2));
  } finally {
    await dir.stop();
  }
});

test("an unknown app is asked of core once (concurrent asks coalesce); 'no such app' is cached", async () => {
  let asked = 0;
  const sub = await bus.reply(IngestSubjects.appLookup, async (data) => {
    asked++;
    const { app_id } = JSON.parse(new TextDecoder().decode(data));
    await Bun.sleep(20);
    return JSON.stringify({ entry: app_id === 500 ? entry(500) : null });
  });
  const dir = new AppDirectory(() => bus, silentLogger, { negativeTtlMs: 60_000 });
  await dir.start();
  try {
    const found = await Promise.all([dir.find(500), dir.find(500), dir.find(500)]);
    expect(found.map((e) => e?.id)).toEqual([500, 500, 500]);
    expect(asked).toBe(1);
    expect(dir.known(500)?.id).toBe(500);
    expect(await dir.find(501)).toBeNull();
    expect(await dir.find(501)).toBeNull();
    expect(asked).toBe(2);
    // ids that cannot exist are not asked about
    expect(await dir.find(0)).toBeNull();
    expect(await dir.find(2 ** 40)).toBeNull();
    expect(asked).toBe(2);
  } finally {
    await dir.stop();
    await sub.stop();
  }
});

test("questions to core are rate-bounded; without a responder the answer is 'unavailable', not 'absent'", async () => {
  const dir = new AppDirectory(() => bus, silentLogger, { lookupsPerSec: 2 });
  await dir.start();
  try {
    // nobody answers: cannot confirm
    const err = await dir.find(700).catch((e) => e);
    expect(err).toBeInstanceOf(DirectoryUnavailable);
    let asked = 0;
    const sub = await bus.reply(IngestSubjects.appLookup, () => {
      asked++;
      return JSON.stringify({ entry: null });
    });
    const rs = await Promise.all([701, 702, 703, 704, 705].map((id) => dir.find(id)));
    expect(rs).toEqual([null, null, null, null, null]);
    expect(asked).toBeLessThanOrEqual(2);
    await sub.stop();
  } finally {
    await dir.stop();
  }
});
