import { pgTable, serial, bigserial, text, timestamp, integer, bigint, date, jsonb, primaryKey, index, uniqueIndex } from "drizzle-orm/pg-core";
import { users } from "./accounts";

/**
 * Billing. Money is integer USD cents (bigint), never a float. `users.balance_cents` is the running
 * balance; every change to it writes one row here in the same transaction, so the balance always
 * equals the sum of the account's transactions (the ledger invariant).
 */
export const billingTransactions = pgTable(
  "billing_transactions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    /** charge | deposit | refund | adjustment */
    type: text("type").notNull(),
    /** Signed effect on the balance: a charge is negative, a deposit positive. */
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    balanceAfterCents: bigint("balance_after_cents", { mode: "number" }).notNull(),
    /** The UTC day the transaction belongs to (a charge: the day charged for). Filters use it. */
    day: date("day", { mode: "string" }).notNull(),
    description: text("description").notNull().default(""),
    /** Exactly-once key of automatic entries: `charge:<user>:<day>`, `topup:<id>`. */
    idemKey: text("idem_key"),
    topUpId: integer("top_up_id"),
    /** A refund names the charge or deposit it returns. */
    refundOf: bigint("refund_of", { mode: "number" }),
    /** The administrator who recorded an adjustment or refund. */
    createdBy: integer("created_by"),
    details: jsonb("details").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("billing_tx_idem_uq").on(t.idemKey),
    index("billing_tx_user_day_idx").on(t.userId, t.day),
    index("billing_tx_refund_of_idx").on(t.refundOf),
  ],
);

/**
 * One row per account and closed UTC day: the usage snapshot and what was charged. The primary key
 * is what makes the daily charge happen once per account and day, whatever the number of runs.
 */
export const billingDays = pgTable(
  "billing_days",
  {
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    day: date("day", { mode: "string" }).notNull(),
    plan: text("plan").notNull(),
    installs: integer("installs").notNull(),
    apps: integer("apps").notNull(),
    /** What the formula asks for the day. */
    amountDueCents: bigint("amount_due_cents", { mode: "number" }).notNull(),
    /** What the balance could pay (less than due only when the account went past_due). */
    chargedCents: bigint("charged_cents", { mode: "number" }).notNull(),
    balanceAfterCents: bigint("balance_after_cents", { mode: "number" }).notNull(),
    /** Subscription status after the day was closed. */
    status: text("status").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.day] })],
);

/** Subscription state beside `users.plan` / `users.subscription_status`: the period and what happens at its end. */
export const billingSubscriptions = pgTable("billing_subscriptions", {
  userId: integer("user_id").primaryKey().references(() => users.id, { onDelete: "cascade" }),
  /** The plan the account moves to at `period_end` (a downgrade or a cancellation); null = none. */
  pendingPlan: text("pending_plan"),
  /** Paid plans run in 30-day periods; null on Free. */
  periodStart: timestamp("period_start", { withTimezone: true }),
  periodEnd: timestamp("period_end", { withTimezone: true }),
  /** Set when a low-balance episode starts (alert sent), cleared when the balance recovers. */
  lowBalanceSince: timestamp("low_balance_since", { withTimezone: true }),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

/** Plan history: the daily rate of a day is the plan in effect at the start of that day. */
export const planChanges = pgTable(
  "plan_changes",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    fromPlan: text("from_plan").notNull(),
    toPlan: text("to_plan").notNull(),
    effectiveAt: timestamp("effective_at", { withTimezone: true }).notNull(),
    /** upgrade | downgrade | cancel | admin */
    reason: text("reason").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("plan_changes_user_idx").on(t.userId, t.effectiveAt)],
);

/** A crypto top-up: one processor invoice, one payment address, one exact amount. */
export const topUps = pgTable(
  "top_ups",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    /** BTC | ETH | USDT */
    currency: text("currency").notNull(),
    /** pending | processing | credited | expired | invalid | manual_review */
    status: text("status").notNull(),
    processor: text("processor").notNull(),
    invoiceId: text("invoice_id").notNull(),
    paymentMethod: text("payment_method").notNull(),
    address: text("address").notNull(),
    /** Exact amount due in the cryptocurrency, as the processor's decimal text (never a float). */
    cryptoAmount: text("crypto_amount").notNull(),
    rate: text("rate"),
    checkoutUrl: text("checkout_url"),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    creditedAt: timestamp("credited_at", { withTimezone: true }),
    transactionId: bigint("transaction_id", { mode: "number" }),
    /** Why it waits for a person: overpaid, underpaid, paid after expiry. */
    reviewReason: text("review_reason"),
    paidAmount: text("paid_amount"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("top_ups_invoice_uq").on(t.processor, t.invoiceId), index("top_ups_user_idx").on(t.userId)],
);

/** Outbox of billing e-mails: written in the transaction that decides to send, delivered after commit. */
export const billingMail = pgTable(
  "billing_mail",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    userId: integer("user_id").notNull().references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    /** pending | sent | skipped (no SMTP configured) | failed (gave up) */
    status: text("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastError: text("last_error"),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    sentAt: timestamp("sent_at", { withTimezone: true }),
  },
  (t) => [index("billing_mail_pending_idx").on(t.status, t.nextAttemptAt)],
);
