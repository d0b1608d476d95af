import { Cron } from "croner";
import type { CoreContext } from "../../context";

/**
 * Periodic jobs. A job is a function of an instant: `run(ctx, at)` does the work "for" `at` (the UTC
 * day or minute that contains it) and must have the effect of once however many times it runs for the
 * same instant, on however many core replicas: exactly-once comes from the database (unique keys,
 * row locks), never from "only one process runs it". Every replica schedules every job.
 */
export interface JobDefinition {
  name: string;
  /** croner pattern, evaluated in UTC; omit for a job that only runs on demand. */
  schedule?: string;
  /** The instant a scheduled firing works for (e.g. "yesterday" for an end-of-day job). Default: the firing time. */
  scheduledAt?: (firedAt: Date) => Date;
  /** Also run once when core starts (catch up on what was missed while it was down). */
  runAtStart?: boolean;
  run(ctx: CoreContext, at: Date): Promise<Record<string, unknown>>;
}

export interface JobRegistry {
  register(def: JobDefinition): void;
  get(name: string): JobDefinition | undefined;
  names(): string[];
  /** Starts the schedules; the returned stop() waits for runs in flight. */
  start(ctx: CoreContext): () => Promise<void>;
}

export function createJobRegistry(): JobRegistry {
  const defs = new Map<string, JobDefinition>();
  return {
    register(def) {
      if (defs.has(def.name)) throw new Error(`job ${def.name} registered twice`);
      defs.set(def.name, def);
    },
    get: (name) => defs.get(name),
    names: () => [...defs.keys()].sort(),
    start(ctx) {
      const inFlight = new Set<Promise<unknown>>();
      let stopped = false;
      const fire = (def: JobDefinition, firedAt: Date) => {
        if (stopped) return;
        const at = def.scheduledAt ? def.scheduledAt(firedAt) : firedAt;
        const p = def
          .run(ctx, at)
          .then((summary) => ctx.log.info("job done", { job: def.name, at: at.toISOString(), ...summary }))
          .catch((err) => ctx.log.error("job failed", { job: def.name, at: at.toISOString(), err }));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        return p;
      };
      const crons: Cron[] = [];
      for (const def of defs.values()) {
        // protect: a slow run is not overlapped by the next firing of the same job in this process
        if (def.schedule) crons.push(new Cron(def.schedule, { timezone: "UTC", protect: true, unref: true }, () => fire(def, ctx.now())));
        if (def.runAtStart) fire(def, ctx.now());
      }
      return async () => {
        stopped = true;
        for (const c of crons) c.stop();
        await Promise.allSettled([...inFlight]);
      };
    },
  };
}

/** Runs a job on demand (the admin endpoint): same code path as the schedule. */
export async function runJob(ctx: CoreContext, jobs: JobRegistry, name: string, at: Date) {
  const def = jobs.get(name);
  if (!def) return null;
  const summary = await def.run(ctx, at);
  ctx.log.info("job done", { job: name, at: at.toISOString(), on_demand: true, ...summary });
  return summary;
}
