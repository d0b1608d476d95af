import { and, eq, inArray, lte, sql } from "drizzle-orm";
import nodemailer from "nodemailer";
import { billingMail } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { Db } from "../../db";

/**
 * Billing e-mail goes through an outbox: the transaction that decides to alert writes the message,
 * and delivery happens after commit (and again from the `billing-mail` job, for what a crash or an
 * SMTP failure left behind). A message is claimed with a lease (`next_attempt_at` pushed forward under
 * `FOR UPDATE SKIP LOCKED`), so replicas never send the same message at once.
 */

const MAX_ATTEMPTS = 8;
const LEASE_MS = 5 * 60_000;

export async function enqueueMail(tx: Db, m: { userId: number; kind: string; to: string; subject: string; body: string; now: Date }) {
  await tx.insert(billingMail).values({ userId: m.userId, kind: m.kind, toAddress: m.to, subject: m.subject, body: m.body, createdAt: m.now, nextAttemptAt: m.now });
}

export interface FlushResult {
  sent: number;
  failed: number;
  skipped: number;
}

/** Delivers due messages. Without SMTP_URL they are marked `skipped` (and logged without their body). */
export async function flushMail(ctx: CoreContext, limit = 50): Promise<FlushResult> {
  const result: FlushResult = { sent: 0, failed: 0, skipped: 0 };
  const now = new Date(); // real time: leases are about this process, not the billing clock
  const claimed = await ctx.db.transaction(async (tx) => {
    const due = await tx
      .select({ id: billingMail.id })
      .from(billingMail)
      .where(and(eq(billingMail.status, "pending"), lte(billingMail.nextAttemptAt, now)))
      .orderBy(billingMail.id)
      .limit(limit)
      .for("update", { skipLocked: true });
    if (due.length === 0) return [];
    return tx
      .update(billingMail)
      .set({ attempts: sql`${billingMail.attempts} + 1`, nextAttemptAt: new Date(now.getTime() + LEASE_MS) })
      .where(inArray(billingMail.id, due.map((d) => d.id)))
      .returning();
  });
  if (claimed.length === 0) return result;
  if (!ctx.config.smtpUrl) {
    for (const m of claimed) ctx.log.warn("billing e-mail not sent: SMTP_URL is not set", { kind: m.kind, user_id: m.userId });
    await ctx.db.update(billingMail).set({ status: "skipped" }).where(inArray(billingMail.id, claimed.map((m) => m.id)));
    result.skipped = claimed.length;
    return result;
  }
  const transport = nodemailer.createTransport(ctx.config.smtpUrl, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  try {
    for (const m of claimed) {
      try {
        await transport.sendMail({ from: ctx.config.mailFrom, to: m.toAddress, subject: m.subject, text: m.body });
        await ctx.db.update(billingMail).set({ status: "sent", sentAt: new Date(), lastError: null }).where(eq(billingMail.id, m.id));
        result.sent++;
      } catch (err) {
        const gaveUp = m.attempts >= MAX_ATTEMPTS;
        // exponential backoff: 1, 2, 4 ... minutes
        const retryAt = new Date(Date.now() + 60_000 * 2 ** Math.min(m.attempts - 1, 10));
        const message = err instanceof Error ? err.message.slice(0, 500) : "send failed";
        await ctx.db
          .update(billingMail)
          .set({ status: gaveUp ? "failed" : "pending", lastError: message, nextAttemptAt: retryAt })
          .where(eq(billingMail.id, m.id));
        ctx.log.warn("billing e-mail failed", { kind: m.kind, user_id: m.userId, attempts: m.attempts, gave_up: gaveUp, error: message });
        result.failed++;
      }
    }
  } finally {
    transport.close();
  }
  return result;
}
