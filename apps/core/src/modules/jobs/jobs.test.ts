import { expect, test } from "bun:test";
import { silentLogger } from "@pushstack/config";
import type { CoreContext } from "../../context";
import { createJobRegistry, runJob } from "./registry";

const ctx = { log: silentLogger, now: () => new Date("2025-03-01T00:05:00Z") } as unknown as CoreContext;

test("names are unique; unknown jobs run as null", async () => {
  const jobs = createJobRegistry();
  jobs.register({ name: "a", run: async () => ({}) });
  expect(() => jobs.register({ name: "a", run: async () => ({}) })).toThrow(/twice/);
  expect(await runJob(ctx, jobs, "nope", new Date())).toBeNull();
  expect(await runJob(ctx, jobs, "a", new Date())).toEqual({});
});

test("runAtStart runs once for scheduledAt(now); stop() waits for the run in flight", async () => {
  const jobs = createJobRegistry();
  const seen: string[] = [];
  let finished = false;
  jobs.register({
    name: "close",
    runAtStart: true,
    scheduledAt: (d) => new Date(d.getTime() - 86_400_000),
    run: async (_ctx, at) => {
      seen.push(at.toISOString());
      await Bun.sleep(200);
      finished = true;
      return {};
    },
  });
  const stop = jobs.start(ctx);
  expect(seen).toEqual(["2025-02-28T00:05:00.000Z"]);
  await stop();
  expect(finished).toBe(true);
});

test("a schedule fires in UTC and a slow run is not overlapped in one process", async () => {
  const jobs = createJobRegistry();
  let running = 0;
  let maxRunning = 0;
  let runs = 0;
  jobs.register({
    name: "tick",
    schedule: "* * * * * *", // every second
    run: async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await Bun.sleep(1500);
      running--;
      runs++;
      return {};
    },
  });
  const stop = jobs.start({ ...ctx, now: () => new Date() } as CoreContext);
  await Bun.sleep(3200);
  await stop();
  expect(runs).toBeGreaterThanOrEqual(1);
  expect(maxRunning).toBe(1);
});
