import { SendSubjects } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { JobRegistry } from "../jobs";
import type { Subscription } from "@pushstack/bus";
import { createPump, type Pump } from "./fanout";
import { scheduleTick } from "./tick";
import { sendDue } from "./due";
import { rollup, startResultsConsumer } from "./results";

export { tagFilter, msgIdOf, sendIdOf, fanOutPage, type Audience, type SchedulerAudience } from "./fanout";
export { createSend } from "./create";
export { scheduleTick, CATCH_UP_MINUTES } from "./tick";
export { sendDue } from "./due";
export { rollup, applyResults } from "./results";

/** The pump of each core context, so a module that creates a send (an instant scheduler) can start its fan-out at once. */
const pumps = new WeakMap<CoreContext, Pump>();

/** Starts fanning out new sends now rather than at the next `send-due` run (within 5 s); a no-op without a started core. */
export function kickSends(ctx: CoreContext): void {
  void pumps.get(ctx)?.kick();
}

/**
 * The send orchestration: jobs `schedule-tick` (every minute, with catch-up), `send-due` (delayed event
 * pushes), `sending-rollup` (SDK reports into analytics); the fan-out pump; the results consumer.
 * Every effect is exactly-once through the database, so every replica runs all of it.
 */
export function createSending(ctx: CoreContext) {
  const pump = createPump(ctx);
  pumps.set(ctx, pump);
  let results: Subscription | null = null;
  return {
    pump,
    register(jobs: JobRegistry) {
      jobs.register({
        name: "schedule-tick",
        schedule: "* * * * *",
        runAtStart: true,
        async run(c, at) {
          const r = await scheduleTick(c, at);
          void pump.kick();
          return r;
        },
      });
      jobs.register({
        name: "send-due",
        schedule: "*/5 * * * * *",
        async run(c, at) {
          const r = await sendDue(c, at);
          // also resumes fan-outs a crashed replica left unfinished
          void pump.kick();
          return r;
        },
      });
      jobs.register({ name: "sending-rollup", schedule: "*/10 * * * * *", run: rollup });
    },
    async start() {
      await ctx.bus.ensureStream({ name: SendSubjects.stream, subjects: [SendSubjects.jobs], retention: "workqueue" });
      await ctx.bus.ensureStream({ name: SendSubjects.resultsStream, subjects: [SendSubjects.results], retention: "workqueue" });
      results = await startResultsConsumer(ctx);
    },
    async stop() {
      await pump.stop();
      await results?.stop();
      results = null;
    },
  };
}
export type Sending = ReturnType<typeof createSending>;

export { analyticsRoutes } from "./routes";
