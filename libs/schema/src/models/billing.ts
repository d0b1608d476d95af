import { Type } from "@sinclair/typebox";
import { Nullable, Timestamp } from "./common";

/** Money in API bodies: integer USD cents. */
const Cents = Type.Integer({ description: "USD cents" });
const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "UTC date YYYY-MM-DD" });

export const TRANSACTION_TYPES = ["charge", "deposit", "refund", "adjustment"] as const;
export const TOP_UP_CURRENCIES = ["BTC", "ETH", "USDT"] as const;
export const SUBSCRIBABLE_PLANS = ["free", "pro", "team"] as const;

export const BalanceObject = Type.Object({
  balance_cents: Cents,
  currency: Type.Literal("USD"),
  projected_daily_cost: Type.Integer({ description: "cents the next daily charge takes at current installs and plan" }),
  days_remaining: Type.Integer({ description: "whole days the balance pays for; 0 when nothing is charged per day (Free)" }),
  plan: Type.String(),
  status: Type.String({ description: "active | past_due" }),
  low_balance: Type.Boolean({ description: "balance below 3 days of projected usage" }),
});

export const UsageObject = Type.Object({
  active_installs: Type.Integer(),
  total_apps: Type.Integer(),
  install_limit: Nullable(Type.Integer({ description: "null = unlimited" })),
  apps_limit: Nullable(Type.Integer({ description: "null = unlimited" })),
  install_percentage: Type.Number(),
  apps_percentage: Type.Number(),
  snapshot_date: Day,
  source: Type.String({ description: "`snapshot`: the latest daily snapshot (today's or yesterday's); `live`: counted now, no recent snapshot" }),
});

export const TransactionObject = Type.Object({
  id: Type.Integer(),
  type: Type.String({ description: "charge | deposit | refund | adjustment" }),
  amount_cents: Type.Integer({ description: "signed effect on the balance (a charge is negative)" }),
  balance_after_cents: Cents,
  currency: Type.Literal("USD"),
  date: Day,
  description: Type.String(),
  top_up_id: Nullable(Type.Integer()),
  refund_of: Nullable(Type.Integer()),
  details: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp,
});

export const TransactionsQuery = Type.Object({
  type: Type.Optional(
    Type.Union(TRANSACTION_TYPES.map((t) => Type.Literal(t)), { error: "type must be one of charge, deposit, refund, adjustment" }),
  ),
  date_from: Type.Optional(Type.String({ error: "date_from must be a date YYYY-MM-DD" })),
  date_to: Type.Optional(Type.String({ error: "date_to must be a date YYYY-MM-DD" })),
  /** Query values arrive as text; the service range-checks them. */
  limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,4}$", error: "limit must be an integer from 1 to 1000" })),
  before_id: Type.Optional(Type.String({ pattern: "^[0-9]{1,15}$", error: "before_id must be a positive integer" })),
});

export const SubscriptionObject = Type.Object({
  plan: Type.String(),
  status: Type.String({ description: "active | past_due" }),
  pending_plan: Nullable(Type.String({ description: "the plan taking effect at current_period_end (downgrade or cancellation)" })),
  current_period_start: Nullable(Timestamp),
  current_period_end: Nullable(Timestamp),
  cancel_at_period_end: Type.Boolean(),
  daily_cost_cents: Type.Integer(),
});

export const ChangeSubscriptionBody = Type.Object({
  plan: Type.Union(SUBSCRIBABLE_PLANS.map((p) => Type.Literal(p)), { error: "plan must be one of free, pro, team" }),
});

export const CreateTopUpBody = Type.Object({
  amount_cents: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000_000, error: "amount_cents must be an integer number of cents" })),
  amount_usd: Type.Optional(Type.Union([Type.Number(), Type.String()], { error: "amount_usd must be a USD amount with at most 2 decimals" })),
  currency: Type.Union(TOP_UP_CURRENCIES.map((c) => Type.Literal(c)), { error: "currency must be one of BTC, ETH, USDT" }),
});

export const TopUpObject = Type.Object({
  id: Type.Integer(),
  amount_cents: Cents,
  currency: Type.String(),
  status: Type.String({ description: "pending | processing | credited | expired | invalid | manual_review" }),
  payment_address: Type.String({ description: "for this top-up only" }),
  crypto_amount: Type.String({ description: "exact amount to send, decimal text" }),
  payment_method: Type.String(),
  checkout_url: Nullable(Type.String()),
  expires_at: Timestamp,
  credited_at: Nullable(Timestamp),
  review_reason: Nullable(Type.String()),
  invoice_id: Type.String(),
  created_at: Timestamp,
});

export const BalanceAdjustmentBody = Type.Object({
  amount_cents: Type.Integer({ minimum: -100_000_000, maximum: 100_000_000, error: "amount_cents must be a non-zero integer (may be negative)" }),
  reason: Type.String({ minLength: 1, maxLength: 500, error: "reason must be 1 to 500 characters" }),
});

export const RefundBody = Type.Object({
  transaction_id: Type.Integer({ minimum: 1, error: "transaction_id must name a charge or deposit" }),
  amount_cents: Type.Optional(Type.Integer({ minimum: 1, error: "amount_cents must be a positive integer" })),
  reason: Type.String({ minLength: 1, maxLength: 500, error: "reason must be 1 to 500 characters" }),
});

export const CreditTopUpBody = Type.Object({
  amount_cents: Type.Integer({ minimum: 1, maximum: 100_000_000, error: "amount_cents must be a positive integer" }),
  reason: Type.String({ minLength: 1, maxLength: 500, error: "reason must be 1 to 500 characters" }),
});

export const AdminSetPlanBody = Type.Object({
  plan: Type.Union(["free", "pro", "team", "enterprise"].map((p) => Type.Literal(p)), { error: "plan must be one of free, pro, team, enterprise" }),
});
