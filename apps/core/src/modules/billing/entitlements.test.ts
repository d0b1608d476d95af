import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AppError } from "@pushstack/http";
import { startTestCore, type TestCore } from "../../testing/harness";
import { requireFeature, requireAppCapacity, requireInstallCapacity, hasFeature } from "./entitlements";
import { assertInstallCapacity, canSend } from "./limits";
import { createApp, addDevices } from "./testkit";

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).status).toBe(403);
    expect((e as AppError).code).toBe("plan_required");
    return (e as AppError).message;
  }
  throw new Error("not refused");
};

describe("features by plan: one mechanism, a 403 naming the cheapest plan that has it", () => {
  test("each feature above Free names its plan", () => {
    expect(refusal(() => requireFeature("free", "ab_testing"))).toBe("A/B testing requires the Pro plan or above");
    expect(refusal(() => requireFeature("free", "event_triggers"))).toBe("Event triggers require the Pro plan or above");
    expect(refusal(() => requireFeature("free", "full_analytics"))).toBe("Full analytics requires the Pro plan or above");
    expect(refusal(() => requireFeature("pro", "api_keys"))).toBe("API keys require the Team plan or above");
    expect(refusal(() => requireFeature("pro", "webhooks"))).toBe("Webhooks require the Team plan or above");
    expect(refusal(() => requireFeature({ plan: "pro" }, "team_members"))).toBe("Team members require the Team plan or above");
    expect(refusal(() => requireFeature("team", "dedicated_support"))).toBe("Dedicated support requires the Enterprise plan or above");
  });

  test("a plan that has the feature passes; an unknown plan is treated as Free", () => {
    expect(() => requireFeature("pro", "event_triggers")).not.toThrow();
    expect(() => requireFeature("team", "api_keys")).not.toThrow();
    expect(() => requireFeature("enterprise", "dedicated_support")).not.toThrow();
    expect(hasFeature("mystery", "event_triggers")).toBe(false);
  });

  test("app limit: Free 1, Pro 5, Team unlimited", () => {
    expect(() => requireAppCapacity("free", 0)).not.toThrow();
    expect(refusal(() => requireAppCapacity("free", 1))).toBe("the Free plan allows 1 app; upgrade to the Pro plan for more");
    expect(() => requireAppCapacity("pro", 4)).not.toThrow();
    expect(refusal(() => requireAppCapacity("pro", 5))).toBe("the Pro plan allows 5 apps; upgrade to the Team plan for more");
    expect(() => requireAppCapacity("team", 10_000)).not.toThrow();
  });

  test("install cap: Free 5,000, Pro 50,000, Team unlimited", () => {
    expect(() => requireInstallCapacity("free", 4999)).not.toThrow();
    expect(refusal(() => requireInstallCapacity("free", 5000))).toBe("the Free plan allows 5000 installs; upgrade to the Pro plan to register more devices");
    expect(refusal(() => requireInstallCapacity("free", 4999, 2))).toContain("Pro plan");
    expect(() => requireInstallCapacity("pro", 49_999)).not.toThrow();
    expect(refusal(() => requireInstallCapacity("pro", 50_000))).toContain("upgrade to the Team plan");
    expect(refusal(() => requireInstallCapacity("free", 10, 60_000))).toContain("upgrade to the Team plan");
    expect(() => requireInstallCapacity("team", 10_000_000)).not.toThrow();
  });
});

describe("install cap and sending checks on real accounts", () => {
  let t: TestCore;
  beforeAll(async () => {
    t = await startTestCore();
  });
  afterAll(() => t.close());

  test("assertInstallCapacity counts the account's devices across its apps", async () => {
    const u = await t.user({ plan: "pro" });
    const [a, b] = [await createApp(t, u.token), await createApp(t, u.token)];
    await addDevices(t, a, 30_000, "a");
    await addDevices(t, b, 19_999, "b");
    await assertInstallCapacity(t.ctx, u.id); // 49,999 + 1
    await addDevices(t, b, 1, "c");
    const err = await assertInstallCapacity(t.ctx, u.id).catch((e) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err.message).toBe("the Pro plan allows 50000 installs; upgrade to the Team plan to register more devices");
    const other = await t.user(); // another account's devices do not count
    await assertInstallCapacity(t.ctx, other.id, 5000);
    expect((await assertInstallCapacity(t.ctx, 999_999).catch((e) => e)).status).toBe(404);
  });

  test("canSend: active accounts send, unknown accounts do not", async () => {
    const u = await t.user();
    expect(await canSend(t.ctx, u.id)).toBe(true);
    expect(await canSend(t.ctx, 999_999)).toBe(false);
  });
});
