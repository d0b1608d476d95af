import { planOf, lowestPlanWith, lowestPlanForApps, lowestPlanForInstalls, type Feature, type Plan } from "@pushstack/schema";
import { planRequired } from "@pushstack/http";

/**
 * The one place that answers "may this plan do X" for features and limits. Every refusal is a 403
 * `planRequired` whose message names the cheapest plan that allows it, so the caller knows what to buy.
 */

const FEATURE_LABELS: Record<Feature, { label: string; plural: boolean }> = {
  ab_testing: { label: "A/B testing", plural: false },
  event_triggers: { label: "Event triggers", plural: true },
  full_analytics: { label: "Full analytics", plural: false },
  team_members: { label: "Team members", plural: true },
  api_keys: { label: "API keys", plural: true },
  webhooks: { label: "Webhooks", plural: true },
  dedicated_support: { label: "Dedicated support", plural: false },
};

type PlanLike = string | Plan | { plan: string };

function resolve(who: PlanLike): Plan {
  if (typeof who === "string") return planOf(who);
  if ("rank" in who) return who;
  return planOf(who.plan);
}

export function hasFeature(who: PlanLike, feature: Feature): boolean {
  return resolve(who).features.has(feature);
}

/** Throws 403 "<Feature> require(s) the <Plan> plan or above" when the plan (or an actor's plan) lacks it. */
export function requireFeature(who: PlanLike, feature: Feature): void {
  if (hasFeature(who, feature)) return;
  const { label, plural } = FEATURE_LABELS[feature];
  throw planRequired(`${label} ${plural ? "require" : "requires"} the ${lowestPlanWith(feature).name} plan or above`);
}

/** Before creating an app: `current` apps exist. */
export function requireAppCapacity(who: PlanLike, current: number): void {
  const plan = resolve(who);
  if (plan.maxApps === null || current < plan.maxApps) return;
  const next = lowestPlanForApps(current + 1);
  throw planRequired(`the ${plan.name} plan allows ${plan.maxApps} app${plan.maxApps === 1 ? "" : "s"}; upgrade to the ${next.name} plan for more`);
}

/** Before registering `adding` devices on an account that has `installs`. Existing devices are never affected. */
export function requireInstallCapacity(who: PlanLike, installs: number, adding = 1): void {
  const plan = resolve(who);
  if (plan.maxInstalls === null || installs + adding <= plan.maxInstalls) return;
  const next = lowestPlanForInstalls(installs + adding);
  throw planRequired(`the ${plan.name} plan allows ${plan.maxInstalls} installs; upgrade to the ${next.name} plan to register more devices`);
}
