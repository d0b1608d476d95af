/**
 * The plan table of the spec, in integer cents. One place answers "may this account do X"
 * and "which plan would allow it" (for the 403 message).
 */
export type PlanId = "free" | "pro" | "team" | "enterprise";
export type Feature = "ab_testing" | "event_triggers" | "full_analytics" | "team_members" | "api_keys" | "webhooks" | "dedicated_support";

export interface Plan {
  id: PlanId;
  name: string;
  /** Monthly base price, cents. Enterprise is priced per contract: 0 here, set by an administrator's adjustments. */
  monthlyPriceCents: number;
  includedInstalls: number;
  /** null = unlimited */
  maxInstalls: number | null;
  /** Overage per 1,000 installs above the included ones, cents. */
  overagePer1000Cents: number;
  /** null = unlimited */
  maxApps: number | null;
  features: ReadonlySet<Feature>;
  /** Order for upgrade/downgrade decisions. */
  rank: number;
}

const f = (...x: Feature[]) => new Set<Feature>(x);

export const PLANS: Record<PlanId, Plan> = {
  free: { id: "free", name: "Free", monthlyPriceCents: 0, includedInstalls: 5000, maxInstalls: 5000, overagePer1000Cents: 0, maxApps: 1, features: f(), rank: 0 },
  pro: {
    id: "pro", name: "Pro", monthlyPriceCents: 4900, includedInstalls: 5000, maxInstalls: 50000, overagePer1000Cents: 33, maxApps: 5,
    features: f("ab_testing", "event_triggers", "full_analytics"), rank: 1,
  },
  team: {
    id: "team", name: "Team", monthlyPriceCents: 14900, includedInstalls: 5000, maxInstalls: null, overagePer1000Cents: 27, maxApps: null,
    features: f("ab_testing", "event_triggers", "full_analytics", "team_members", "api_keys", "webhooks"), rank: 2,
  },
  enterprise: {
    id: "enterprise", name: "Enterprise", monthlyPriceCents: 0, includedInstalls: 5000, maxInstalls: null, overagePer1000Cents: 0, maxApps: null,
    features: f("ab_testing", "event_triggers", "full_analytics", "team_members", "api_keys", "webhooks", "dedicated_support"), rank: 3,
  },
};

export const PLAN_IDS = Object.keys(PLANS) as PlanId[];

export function planOf(id: string): Plan {
  return PLANS[(id in PLANS ? id : "free") as PlanId];
}

/** The cheapest plan that has the feature. */
export function lowestPlanWith(feature: Feature): Plan {
  return PLAN_IDS.map((p) => PLANS[p]).filter((p) => p.features.has(feature)).sort((a, b) => a.rank - b.rank)[0]!;
}

/** The cheapest plan whose app limit allows `count` apps. */
export function lowestPlanForApps(count: number): Plan {
  return PLAN_IDS.map((p) => PLANS[p]).filter((p) => p.maxApps === null || p.maxApps >= count).sort((a, b) => a.rank - b.rank)[0]!;
}

/** The cheapest plan whose install cap allows `count` installs. */
export function lowestPlanForInstalls(count: number): Plan {
  return PLAN_IDS.map((p) => PLANS[p]).filter((p) => p.maxInstalls === null || p.maxInstalls >= count).sort((a, b) => a.rank - b.rank)[0]!;
}
