import { and, desc, eq, inArray, lte } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import { topUps } from "@pushstack/schema";
import { AppError, badRequest, conflict, notFound, unauthorized, unavailable } from "@pushstack/http";
import type { Actor, CoreContext } from "../../context";
import type { Db } from "../../db";
import { withAccount, postEntry, settleAccount, type Account } from "./ledger";
import { createBtcpayProcessor } from "./btcpay";
import { ProcessorError, type PaymentProcessor, type ProcessorEvent, type TopUpCurrency } from "./processor";
import { compareDecimal, usdToCents, utcDay } from "./money";
import { assertAccountWide } from "./access";

export const MIN_TOP_UP_CENTS = 1000;
/** The spec: a deposit not credited within the hour needs a person. The invoice expires then too. */
export const TOP_UP_EXPIRY_MINUTES = 60;

type TopUpRow = typeof topUps.$inferSelect;

const processors = new WeakMap<object, PaymentProcessor>();

/** The configured processor (BTCPay when its four settings are set), or null. */
export function processorFor(ctx: CoreContext): PaymentProcessor | null {
  const c = ctx.config;
  if (!c.btcpayUrl || !c.btcpayApiKey || !c.btcpayStoreId || !c.btcpayWebhookSecret) return null;
  let p = processors.get(c);
  if (!p) {
    p = createBtcpayProcessor({ url: c.btcpayUrl, apiKey: c.btcpayApiKey, storeId: c.btcpayStoreId, webhookSecret: c.btcpayWebhookSecret });
    processors.set(c, p);
  }
  return p;
}

function requireProcessor(ctx: CoreContext): PaymentProcessor {
  const p = processorFor(ctx);
  if (!p) throw unavailable("crypto top-ups are not configured on this server (BTCPAY_* settings)");
  return p;
}

const processorFailed = (err: unknown, ctx: CoreContext) => {
  ctx.log.error("payment processor failed", { err });
  return new AppError(502, "processor_failed", "the payment processor is not answering, try again shortly");
};

export function topUpView(t: TopUpRow) {
  return {
    id: t.id,
    amount_cents: t.amountCents,
    currency: t.currency,
    status: t.status,
    payment_address: t.address,
    crypto_amount: t.cryptoAmount,
    payment_method: t.paymentMethod,
    checkout_url: t.checkoutUrl,
    expires_at: t.expiresAt.toISOString(),
    credited_at: t.creditedAt ? t.creditedAt.toISOString() : null,
    review_reason: t.reviewReason,
    invoice_id: t.invoiceId,
    created_at: t.createdAt.toISOString(),
  };
}

export async function createTopUp(ctx: CoreContext, actor: Actor, input: { amount_cents?: number; amount_usd?: number | string; currency: TopUpCurrency }) {
  assertAccountWide(actor);
  if ((input.amount_cents === undefined) === (input.amount_usd === undefined)) throw badRequest("give exactly one of amount_cents or amount_usd");
  const cents = input.amount_cents ?? usdToCents(input.amount_usd!);
  if (cents < MIN_TOP_UP_CENTS) throw badRequest(`the minimum top-up is 10 USD (${MIN_TOP_UP_CENTS} cents)`);
  if (cents > 100_000_000) throw badRequest("the maximum top-up is 1,000,000 USD");
  const processor = requireProcessor(ctx);
  let inv;
  try {
    inv = await processor.createInvoice({
      amountCents: cents,
      currency: input.currency,
      orderId: `pushstack-topup-${randomUUID()}`,
      expiresInMinutes: TOP_UP_EXPIRY_MINUTES,
      buyerEmail: actor.email,
      redirectUrl: ctx.config.publicUrl ? `${ctx.config.publicUrl}/billing` : undefined,
    });
  } catch (err) {
    throw processorFailed(err, ctx);
  }
  if (!inv.payment) throw processorFailed(new ProcessorError(`no ${input.currency} payment method on invoice ${inv.id}`), ctx);
  // each address is for one transaction only: a processor that hands out an old one is refused
  const [reused] = await ctx.db.select({ id: topUps.id }).from(topUps).where(eq(topUps.address, inv.payment.address)).limit(1);
  if (reused) throw processorFailed(new ProcessorError(`payment address reused by invoice ${inv.id}`), ctx);
  const now = ctx.now();
  const [row] = await ctx.db
    .insert(topUps)
    .values({
      userId: actor.userId,
      amountCents: cents,
      currency: input.currency,
      status: "pending",
      processor: processor.name,
      invoiceId: inv.id,
      paymentMethod: inv.payment.method,
      address: inv.payment.address,
      cryptoAmount: inv.payment.amount,
      rate: inv.payment.rate,
      checkoutUrl: inv.checkoutUrl,
      expiresAt: inv.expiresAt,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return topUpView(row!);
}

/** Marks top-ups still waiting past their hour as `expired` (a late settlement can still credit them). */
export async function expireOverdueTopUps(ctx: CoreContext, opts: { userId?: number; at?: Date } = {}): Promise<number> {
  const { userId } = opts;
  const now = opts.at ?? ctx.now();
  const where = and(inArray(topUps.status, ["pending", "processing"]), lte(topUps.expiresAt, now), userId ? eq(topUps.userId, userId) : undefined);
  const rows = await ctx.db.update(topUps).set({ status: "expired", updatedAt: now }).where(where).returning({ id: topUps.id });
  return rows.length;
}

export async function listTopUps(ctx: CoreContext, actor: Actor) {
  assertAccountWide(actor);
  await expireOverdueTopUps(ctx, { userId: actor.userId });
  const rows = await ctx.db.select().from(topUps).where(eq(topUps.userId, actor.userId)).orderBy(desc(topUps.id)).limit(200);
  return rows.map(topUpView);
}

export async function getTopUp(ctx: CoreContext, actor: Actor, id: number) {
  assertAccountWide(actor);
  await expireOverdueTopUps(ctx, { userId: actor.userId });
  const [row] = await ctx.db.select().from(topUps).where(and(eq(topUps.id, id), eq(topUps.userId, actor.userId)));
  if (!row) throw notFound("top-up");
  return topUpView(row);
}

async function lockTopUp(tx: Db, id: number): Promise<TopUpRow> {
  const [row] = await tx.select().from(topUps).where(eq(topUps.id, id)).for("update");
  if (!row) throw notFound("top-up");
  return row;
}

/** Credits a top-up once: the row lock and the ledger key `topup:<id>` make any repeat a no-op. */
async function credit(ctx: CoreContext, tx: Db, acct: Account, t: TopUpRow, amountCents: number, extra: { adminId?: number; reason?: string }) {
  const now = ctx.now();
  const entry = await postEntry(
    tx,
    acct,
    {
      type: "deposit",
      amountCents,
      day: utcDay(now),
      description: `Top-up #${t.id}: ${t.cryptoAmount} ${t.currency}${extra.reason ? ` (${extra.reason})` : ""}`,
      idemKey: `topup:${t.id}`,
      topUpId: t.id,
      createdBy: extra.adminId,
      details: { invoice_id: t.invoiceId, currency: t.currency, crypto_amount: t.cryptoAmount, ...(extra.adminId ? { reviewed_by: extra.adminId } : {}) },
    },
    now,
  );
  await tx.update(topUps).set({ status: "credited", creditedAt: now, transactionId: entry?.id ?? t.transactionId, updatedAt: now }).where(eq(topUps.id, t.id));
  await settleAccount(ctx, tx, acct, now);
  return entry;
}

export type WebhookResult = "credited" | "duplicate" | "flagged" | "updated" | "ignored";

/**
 * A processor webhook. The signature is checked over the raw body before anything else. The event is
 * only a hint: the invoice is read back from the processor, and only a settled invoice paid exactly is
 * credited; over- and underpayments and payments after expiry wait for a person (`manual_review`).
 */
export async function handleWebhook(ctx: CoreContext, rawBody: string, headers: Headers): Promise<{ status: "ok"; result: WebhookResult }> {
  const processor = requireProcessor(ctx);
  if (!processor.verifyWebhook(rawBody, headers)) throw unauthorized("invalid webhook signature");
  const event = processor.parseWebhook(rawBody);
  if (!event) throw badRequest("webhook body is not a processor event");
  const [t] = await ctx.db.select().from(topUps).where(and(eq(topUps.processor, processor.name), eq(topUps.invoiceId, event.invoiceId)));
  // not ours (another application on the same store): acknowledge so the processor stops retrying
  if (!t || event.kind === "other") return { status: "ok", result: "ignored" };
  let invoice = null;
  if (event.kind === "settled") {
    try {
      invoice = await processor.getInvoice(event.invoiceId, t.currency as TopUpCurrency);
    } catch (err) {
      throw processorFailed(err, ctx); // a non-2xx makes the processor deliver again later
    }
  }
  const result = await withAccount(ctx, t.userId, async (tx, acct) => {
    const row = await lockTopUp(tx, t.id);
    if (row.status === "credited") return "duplicate" as const;
    return applyEvent(ctx, tx, acct, row, event, invoice);
  });
  ctx.log.info("payment webhook", { processor: processor.name, type: event.type, delivery: event.deliveryId, top_up_id: t.id, result });
  return { status: "ok", result };
}

async function applyEvent(
  ctx: CoreContext,
  tx: Db,
  acct: Account,
  t: TopUpRow,
  event: ProcessorEvent,
  invoice: Awaited<ReturnType<PaymentProcessor["getInvoice"]>> | null,
): Promise<WebhookResult> {
  const now = ctx.now();
  const flag = async (reason: string, paid?: string | null) => {
    if (t.status === "manual_review") return "duplicate" as const;
    await tx.update(topUps).set({ status: "manual_review", reviewReason: reason, paidAmount: paid ?? null, updatedAt: now }).where(eq(topUps.id, t.id));
    ctx.log.warn("top-up needs manual review", { top_up_id: t.id, user_id: t.userId, reason });
    return "flagged" as const;
  };
  const setStatus = async (status: string) => {
    if (t.status === status) return "duplicate" as const;
    await tx.update(topUps).set({ status, updatedAt: now }).where(eq(topUps.id, t.id));
    return "updated" as const;
  };
  switch (event.kind) {
    case "settled": {
      if (!invoice || invoice.state !== "settled") return "ignored"; // the processor does not confirm it
      if (t.status === "manual_review") return "duplicate"; // a person decides
      const paid = invoice.payment?.paid ?? null;
      if (event.overPaid || invoice.detail === "PaidOver") return flag("overpaid", paid);
      if (invoice.detail === "PaidPartial") return flag("underpaid", paid);
      // a settlement marked by the store's administrator is their decision: no amount check
      const marked = event.manuallyMarked || invoice.detail === "Marked";
      if (!marked && invoice.payment && compareDecimal(invoice.payment.paid, "0") > 0) {
        const cmp = compareDecimal(invoice.payment.paid, invoice.payment.amount);
        if (cmp > 0) return flag("overpaid", paid);
        if (cmp < 0) return flag("underpaid", paid);
      }
      // null: the ledger already holds this top-up's deposit (its key is unique)
      return (await credit(ctx, tx, acct, t, t.amountCents, {})) ? "credited" : "duplicate";
    }
    case "expired":
      if (event.partiallyPaid) return flag("underpaid: the invoice expired partially paid");
      return t.status === "pending" || t.status === "processing" ? setStatus("expired") : "duplicate";
    case "payment_received":
      if (event.afterExpiration) return flag("paid after the invoice expired");
      return "ignored";
    case "processing":
      return t.status === "pending" || t.status === "expired" ? setStatus("processing") : "duplicate";
    case "invalid":
      return t.status === "manual_review" ? "duplicate" : setStatus("invalid");
    default:
      return "ignored";
  }
}

/** Administrator's decision on a top-up in review (or expired/invalid): credit the amount actually received. */
export async function adminCreditTopUp(ctx: CoreContext, admin: Actor, topUpId: number, amountCents: number, reason: string) {
  const [t] = await ctx.db.select().from(topUps).where(eq(topUps.id, topUpId));
  if (!t) throw notFound("top-up");
  return withAccount(ctx, t.userId, async (tx, acct) => {
    const row = await lockTopUp(tx, topUpId);
    if (row.status === "credited") throw conflict(`top-up ${topUpId} is already credited`);
    if (row.status === "pending" || row.status === "processing") throw conflict(`top-up ${topUpId} is still ${row.status} at the processor`);
    const entry = await credit(ctx, tx, acct, row, amountCents, { adminId: admin.userId, reason });
    const [updated] = await tx.select().from(topUps).where(eq(topUps.id, topUpId));
    return { top_up: topUpView(updated!), transaction_id: entry?.id ?? null, balance_cents: acct.user.balanceCents };
  });
}

export async function adminListTopUps(ctx: CoreContext, status?: string) {
  await expireOverdueTopUps(ctx);
  const rows = await ctx.db.select().from(topUps).where(status ? eq(topUps.status, status) : undefined).orderBy(desc(topUps.id)).limit(500);
  return rows.map((t) => ({ ...topUpView(t), user_id: t.userId, paid_amount: t.paidAmount }));
}
