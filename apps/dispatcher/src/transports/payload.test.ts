import { describe, expect, test } from "bun:test";
import { buildApnsNotification, buildFcmMessage, buildWebPushPayload, contentKeys, isValidContent } from "./payload";

const full = { msg_id: "m-1", title: "Bonus 100%", body: "Deposit today", icon_url: "https://cdn.example/i.png", image_url: "https://cdn.example/b.jpg", click_url: "https://offer.example/?a=1" };
const bare = { msg_id: "m-2", title: "Hi", body: "There", icon_url: null, image_url: "", click_url: undefined };

describe("contentKeys", () => {
  test("carries the contract's keys, optional ones only when set", () => {
    expect(contentKeys(full)).toEqual(full);
    expect(contentKeys(bare)).toEqual({ msg_id: "m-2", title: "Hi", body: "There" });
  });
});

describe("isValidContent", () => {
  test("needs msg_id and title, allows a missing body", () => {
    expect(isValidContent(full)).toBe(true);
    expect(isValidContent({ msg_id: "m", title: "t" })).toBe(true);
    for (const bad of [null, undefined, "x", {}, { msg_id: "", title: "t" }, { msg_id: "m" }, { msg_id: "m", title: "t", body: 3 }, { msg_id: "m", title: "t", click_url: {} }]) {
      expect(isValidContent(bad)).toBe(false);
    }
  });
});

describe("buildFcmMessage", () => {
  test("is a data-only, high-priority message with string data and a TTL", () => {
    const m = buildFcmMessage("tok", full, 3600);
    expect(m).toEqual({ token: "tok", data: full, android: { priority: "high", ttl: 3_600_000 } });
    expect(Object.values(m.data!).every((v) => typeof v === "string")).toBe(true);
    expect(buildFcmMessage("tok", bare).data).toEqual({ msg_id: "m-2", title: "Hi", body: "There" });
  });
});

describe("buildApnsNotification", () => {
  test("puts title/body in aps.alert and the contract's keys beside aps", () => {
    const note = buildApnsNotification(full, { bundleId: "com.example.app", ttlSeconds: 60, nowSec: 1_000 });
    const json = JSON.parse((note as any).compile());
    expect(json.aps).toEqual({ alert: { title: full.title, body: full.body }, sound: "default", "mutable-content": 1 });
    expect(json.msg_id).toBe("m-1");
    expect(json.click_url).toBe(full.click_url);
    expect(json.image_url).toBe(full.image_url);
    expect(json.icon_url).toBe(full.icon_url);
    expect((note as any).headers()).toEqual({ "apns-priority": 10, "apns-expiration": 1_060, "apns-topic": "com.example.app", "apns-push-type": "alert" });
  });
  test("no mutable-content without an image, no unset keys", () => {
    const json = JSON.parse((buildApnsNotification(bare, { bundleId: "b" }) as any).compile());
    expect(json.aps["mutable-content"]).toBeUndefined();
    expect(Object.keys(json).sort()).toEqual(["aps", "body", "msg_id", "title"]);
  });
});

describe("buildWebPushPayload", () => {
  test("is the contract's JSON object", () => {
    expect(JSON.parse(buildWebPushPayload(full))).toEqual(full);
    expect(JSON.parse(buildWebPushPayload(bare))).toEqual({ msg_id: "m-2", title: "Hi", body: "There" });
  });
});
