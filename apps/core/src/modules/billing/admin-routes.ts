import { Elysia } from "elysia";
import { Type } from "@sinclair/typebox";
import { BalanceAdjustmentBody, RefundBody, CreditTopUpBody, AdminSetPlanBody, TransactionObject, SubscriptionObject, ErrorBody } from "@pushstack/schema";
import type { CoreContext } from "../../context";
import type { TokenSigner } from "../auth/tokens";
import { adminOnly } from "../auth/plugin";
import { pathId } from "../../lib/params";
import * as admin from "./admin";
import * as tops from "./topups";
import { adminSetPlan } from "./subscription";

const detail = (summary: string, description?: string) => ({ tags: ["Admin"], summary, ...(description ? { description } : {}) });
const WithBalance = Type.Composite([TransactionObject, Type.Object({ balance_cents: Type.Integer() })]);

export function billingAdminRoutes(ctx: CoreContext, tokens: TokenSigner) {
  return new Elysia({ prefix: "/api/v3/admin" })
    .use(adminOnly(ctx, tokens))
    .post(
      "/users/:user_id/balance-adjustments",
      async ({ actor, params, body, set }) => {
        const r = await admin.adjustBalance(ctx, actor, pathId(params.user_id, "user"), body.amount_cents, body.reason);
        set.status = 201;
        return r;
      },
      {
        body: BalanceAdjustmentBody,
        response: { 201: WithBalance, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: detail("Adjust a balance", "Records an `adjustment` transaction of `amount_cents` (non-zero, may be negative; 409 if the balance would go below zero)."),
      },
    )
    .post(
      "/users/:user_id/refunds",
      async ({ actor, params, body, set }) => {
        const r = await admin.refund(ctx, actor, pathId(params.user_id, "user"), body);
        set.status = 201;
        return r;
      },
      {
        body: RefundBody,
        response: { 201: WithBalance, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody },
        detail: detail(
          "Refund a charge or a deposit",
          "A charge's refund goes back to the balance; a deposit's refund leaves it (the money returns to the customer). `amount_cents` defaults to what is left to refund.",
        ),
      },
    )
    .get("/users/:user_id/billing", ({ params }) => admin.adminBillingView(ctx, pathId(params.user_id, "user")), {
      detail: detail("An account's billing: subscription, balance, usage, daily snapshots, transactions, top-ups, ledger check"),
    })
    .put("/users/:user_id/plan", ({ params, body }) => adminSetPlan(ctx, pathId(params.user_id, "user"), body.plan), {
      body: AdminSetPlanBody,
      response: { 200: SubscriptionObject, 404: ErrorBody },
      detail: detail("Set an account's plan at once (Enterprise included); the rate applies from the next day"),
    })
    .get("/top-ups", ({ query }) => tops.adminListTopUps(ctx, query.status), {
      query: Type.Object({ status: Type.Optional(Type.String({ maxLength: 32 })) }),
      detail: detail("Top-ups of every account, e.g. `?status=manual_review`"),
    })
    .post("/top-ups/:top_up_id/credit", ({ actor, params, body }) => tops.adminCreditTopUp(ctx, actor, pathId(params.top_up_id, "top-up"), body.amount_cents, body.reason), {
      body: CreditTopUpBody,
      response: { 404: ErrorBody, 409: ErrorBody },
      detail: detail("Credit a top-up after manual review (over- or underpaid, late)", "Credits `amount_cents` (what was actually received) once."),
    });
}
