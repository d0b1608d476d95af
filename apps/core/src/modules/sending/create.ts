import { sql } from "drizzle-orm";
import { pushRotations, sends } from "@pushstack/schema";
import type { Db } from "../../db";
import type { Audience } from "./fanout";

/**
 * Creates a send exactly once per `key` (ON CONFLICT DO NOTHING) and, only for the inserter, advances the
 * push's rotation counter in the same transaction: `{Push={A|B|C}}` moves once per send, not per
 * recipient, and a retried or concurrent firing neither sends twice nor skips a variant.
 * Returns the new send id, or null when this key was already sent.
 */
export async function createSend(
  tx: Db,
  s: { key: string; appId: number; source: string; sourceId: number; packId: number | null; templateId?: number | null; audience: Audience; renderAt: Date },
): Promise<number | null> {
  const [row] = await tx
    .insert(sends)
    .values({
      sendKey: s.key,
      appId: s.appId,
      source: s.source,
      sourceId: s.sourceId,
      packId: s.packId,
      templateId: s.templateId ?? null,
      audience: JSON.stringify(s.audience),
      day: s.renderAt.toISOString().slice(0, 10),
      renderAt: s.renderAt,
    })
    .onConflictDoNothing()
    .returning({ id: sends.id });
  if (!row) return null;
  const [rot] = await tx
    .insert(pushRotations)
    .values({ source: s.source, sourceId: s.sourceId, counter: 1 })
    .onConflictDoUpdate({ target: [pushRotations.source, pushRotations.sourceId], set: { counter: sql`${pushRotations.counter} + 1` } })
    .returning({ counter: pushRotations.counter });
  await tx.update(sends).set({ rotation: rot!.counter - 1 }).where(sql`${sends.id} = ${row.id}`);
  return row.id;
}
