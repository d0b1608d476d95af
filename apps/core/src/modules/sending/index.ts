import { Elysia, t } from "elysia";
import { ErrorBody, SendSubjects } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import type { JobRegistry } from "../jobs";
import type { Subscription } from "@pushstack/bus";
import { createPump } from "./fanout";
import { scheduleTick } from "./tick";
import { sendDue } from "./due";
import { rollup, startResultsConsumer } from "./results";
import { appAnalytics } from "./analytics";

export { tagFilter, msgIdOf, sendIdOf, fanOutPage } from "./fanout";
export { scheduleTick, CATCH_UP_MINUTES } from "./tick";
export { sendDue } from "./due";
export { rollup, applyResults } from "./results";

/**
 * The send orchestration: jobs `schedule-tick` (every minute, with catch-up), `send-due` (delayed event
 * pushes), `sending-rollup` (SDK reports into analytics); the fan-out pump; the results consumer.
 * Every effect is exactly-once through the database, so every replica runs all of it.
 */
export function createSending(ctx: CoreContext) {
  const pump = createPump(ctx);
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

export function analyticsRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/apps/:app_id/analytics" }).use(authed(ctx, tokens)).get("", ({ actor, params, query }) => appAnalytics(ctx, actor, pathId(params.app_id, "app"), query), {
    query: t.Object({
      date_from: t.Optional(t.String()),
      date_to: t.Optional(t.String()),
      group_by: t.Optional(t.String()),
      push_id: t.Optional(t.String()),
      pack_id: t.Optional(t.String()),
    }),
    response: { 200: t.Object({}, { additionalProperties: true }), 400: ErrorBody, 403: ErrorBody, 404: ErrorBody },
    detail: {
      tags: ["Analytics"],
      summary: "Sent, failed, delivered, clicked and CTR (clicked / delivered) of an app, by day, push or pack, for a UTC date range",
    },
  });
}
