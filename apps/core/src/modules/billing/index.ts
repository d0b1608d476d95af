import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import {
  BalanceObject, UsageObject, TransactionObject, TransactionsQuery, SubscriptionObject, ChangeSubscriptionBody,
  CreateTopUpBody, TopUpObject, ErrorBody, PLANS, PLAN_IDS,
} from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { authed } from "../auth/plugin";
import { pathId } from "../../lib/params";
import type { JobRegistry } from "../jobs/registry";
import * as svc from "./service";
import * as subs from "./subscription";
import * as tops from "./topups";
import { closeDay } from "./close-day";
import { flushMail } from "./mail";
import { dailyChargeCents } from "./money";

export { billingAdminRoutes } from "./admin-routes";

const detail = (summary: string, description?: string) => ({ tags: ["Billing"], summary, ...(description ? { description } : {}) });

const planView = (id: (typeof PLAN_IDS)[number]) => {
  const p = PLANS[id];
  return {
    id: p.id,
    name: p.name,
    monthly_price_cents: p.monthlyPriceCents,
    daily_base_cents: dailyChargeCents(p, 0),
    included_installs: p.includedInstalls,
    max_installs: p.maxInstalls,
    overage_per_1000_cents: p.overagePer1000Cents,
    max_apps: p.maxApps,
    features: [...p.features].sort(),
  };
};

export function billingRoutes(ctx: CoreContext, tokens: TokenSigner) {
  const user = new Elysia({ prefix: "/api/v3/billing" })
    .use(authed(ctx, tokens))
    .get("/plans", () => PLAN_IDS.map(planView), { detail: detail("The plans: prices (cents), install and app limits, features") })
    .get("/balance", ({ actor }) => svc.getBalance(ctx, actor), {
      response: { 200: BalanceObject, 403: ErrorBody },
      detail: detail("Balance and how long it lasts", "`projected_daily_cost` uses the daily charge formula with the current plan and installs."),
    })
    .get("/usage", ({ actor }) => svc.getUsage(ctx, actor), { response: { 200: UsageObject }, detail: detail("Installs and apps against the plan's limits") })
    .get("/transactions", ({ actor, query }) => svc.listTransactions(ctx, actor, query), {
      query: TransactionsQuery,
      response: { 200: Type.Array(TransactionObject), 400: ErrorBody },
      detail: detail(
        "Transaction history, newest first",
        "Filters: `type` (charge, deposit, refund, adjustment), `date_from` / `date_to` (UTC days, inclusive; a charge's date is the day charged for), `limit` (default 100, max 1000), `before_id` (next page).",
      ),
    })
    .get("/subscription", ({ actor }) => subs.getSubscription(ctx, actor), { response: { 200: SubscriptionObject }, detail: detail("The subscription") })
    .put("/subscription", ({ actor, body }) => subs.changePlan(ctx, actor, body.plan), {
      body: ChangeSubscriptionBody,
      response: { 200: SubscriptionObject, 400: ErrorBody, 409: ErrorBody },
      detail: detail(
        "Change plan",
        "Upgrade: the new plan at once, its daily rate from the next UTC day. Downgrade: at the end of the current period (`pending_plan`); 409 when installs exceed the new plan's limit. Choosing the current plan withdraws a pending change.",
      ),
    })
    .post("/subscription/cancel", ({ actor }) => subs.cancelSubscription(ctx, actor), {
      response: { 200: SubscriptionObject },
      detail: detail("Cancel: the plan stays until the period ends, then Free"),
    })
    .post(
      "/top-ups",
      async ({ actor, body, set }) => {
        const t = await tops.createTopUp(ctx, actor, body);
        set.status = 201;
        return t;
      },
      {
        body: CreateTopUpBody,
        response: { 201: TopUpObject, 400: ErrorBody, 502: ErrorBody, 503: ErrorBody },
        detail: detail(
          "Top up by cryptocurrency",
          "`amount_cents` (or `amount_usd`, at most 2 decimals), minimum 10 USD; `currency` BTC, ETH or USDT. Answers a payment address for this top-up only and the exact amount to send; the balance is credited once the payment settles. Not settled within the hour: `expired`; over- or underpaid: `manual_review`.",
        ),
      },
    )
    .get("/top-ups", ({ actor }) => tops.listTopUps(ctx, actor), { response: { 200: Type.Array(TopUpObject) }, detail: detail("Top-ups, newest first") })
    .get("/top-ups/:top_up_id", ({ actor, params }) => tops.getTopUp(ctx, actor, pathId(params.top_up_id, "top-up")), {
      response: { 200: TopUpObject, 404: ErrorBody },
      detail: detail("One top-up"),
    });

  // no bearer token: the processor authenticates with the HMAC signature over the raw body
  const webhooks = new Elysia({ prefix: "/api/v3/billing/webhooks" }).post(
    "/btcpay",
    ({ body, request }) => tops.handleWebhook(ctx, typeof body === "string" ? body : "", request.headers),
    {
      parse: "text",
      detail: detail(
        "BTCPay Server webhook",
        "Signed with `BTCPay-Sig: sha256=<hex HMAC-SHA256 of the raw body>`; 401 on a bad signature. A settled invoice credits its top-up once, whatever the number of deliveries.",
      ),
    },
  );

  return new Elysia({ name: "billing" }).use(user).use(webhooks);
}

/** The billing jobs. Every replica schedules them; their effects are exactly-once through the database. */
export function registerBillingJobs(jobs: JobRegistry) {
  jobs.register({
    name: "billing-close-day",
    schedule: "5 0 * * *",
    // fired a few minutes into a UTC day: it closes the day before
    scheduledAt: (firedAt) => new Date(firedAt.getTime() - 86_400_000),
    runAtStart: true,
    run: async (ctx, at) => ({ ...(await closeDay(ctx, at)) }),
  });
  jobs.register({
    name: "billing-expire-top-ups",
    schedule: "*/5 * * * *",
    run: async (ctx, at) => ({ expired: await tops.expireOverdueTopUps(ctx, { at }) }),
  });
  jobs.register({
    name: "billing-mail",
    schedule: "* * * * *",
    run: async (ctx) => ({ ...(await flushMail(ctx)) }),
  });
}
