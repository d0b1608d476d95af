import { Value } from "@sinclair/typebox/value";
import { AppLookupRequest, IngestSubjects, RegisterRequest, type AppLookupReply, type RegisterReply } from "@pushstack/schema";
import { decodeJson, type Subscription } from "@pushstack/bus";
import type { CoreContext } from "../../context";
import { directoryEntries } from "../directory/service";
import { registerInstance } from "../devices/service";

/**
 * What the edge asks core because only the database knows: an SDK registration (`id`, a truthful
 * `just_created`, the install cap) and an app the edge's directory has not seen yet. Queue group
 * "core": one replica answers each request.
 */
export async function startResponders(ctx: CoreContext): Promise<Subscription[]> {
  const register = await ctx.bus.reply(
    IngestSubjects.register,
    async (data) => {
      let req: unknown;
      try {
        req = decodeJson(data);
      } catch {}
      if (!Value.Check(RegisterRequest, req)) return JSON.stringify({ ok: false, status: 400, error: "invalid registration request" } satisfies RegisterReply);
      return JSON.stringify(await registerInstance(ctx, req));
    },
    { queue: "core" },
  );
  const lookup = await ctx.bus.reply(
    IngestSubjects.appLookup,
    async (data) => {
      let req: unknown;
      try {
        req = decodeJson(data);
      } catch {}
      if (!Value.Check(AppLookupRequest, req) || req.app_id > 2147483647) return JSON.stringify({ entry: null } satisfies AppLookupReply);
      const [entry] = await directoryEntries(ctx, { appId: req.app_id });
      return JSON.stringify({ entry: entry ?? null } satisfies AppLookupReply);
    },
    { queue: "core" },
  );
  return [register, lookup];
}
