import { expect, test } from "bun:test";
import { checkDeviceInfo, isDeposit, normalizeLanguage } from "./devices";

test("language tags are normalised: primary lower case, region upper case, script title case", () => {
  expect(normalizeLanguage("EN")).toBe("en");
  expect(normalizeLanguage("pt_br")).toBe("pt-BR");
  expect(normalizeLanguage("zh-hant-tw")).toBe("zh-Hant");
  expect(normalizeLanguage("es-419")).toBe("es-419");
  for (const bad of ["", "e", "english!", "en--US", "12"]) expect(normalizeLanguage(bad)).toBeNull();
});

test("platform and transport go together; the transport is inferred from the platform", () => {
  expect(checkDeviceInfo({ platform: "ios", transport_type: "apns", transport_token: "ab12" })).toMatchObject({ ok: true, transportType: "apns", transportToken: "ab12" });
  expect(checkDeviceInfo({ platform: "android", transport_token: "t" })).toMatchObject({ ok: true, transportType: "fcm" });
  expect(checkDeviceInfo({ platform: "web", transport_type: "fcm" })).toEqual({ ok: false, error: "transport_type must be webpush for platform web" });
  expect(checkDeviceInfo({ platform: "android", transport_token: "has space" })).toMatchObject({ ok: false });
  // clearing a token leaves the transport type alone
  expect(checkDeviceInfo({ platform: "android", transport_token: null })).toMatchObject({ ok: true, transportToken: null, transportType: undefined });
});

test("a web push token is a subscription, canonicalised", () => {
  const sub = { endpoint: "https://push.example/abc", keys: { p256dh: "p", auth: "a" }, extra: 1 };
  const r = checkDeviceInfo({ platform: "web", transport_token: JSON.stringify(sub) });
  expect(r.ok && JSON.parse(r.transportToken!)).toEqual({ endpoint: sub.endpoint, keys: sub.keys });
  expect(checkDeviceInfo({ platform: "web", transport_token: { endpoint: "ftp://x", keys: { p256dh: "p", auth: "a" } } })).toMatchObject({ ok: false });
  expect(checkDeviceInfo({ platform: "web", transport_token: { endpoint: "https://x" } })).toMatchObject({ ok: false });
});

test("deposits are dep and depN", () => {
  expect(["dep", "dep2", "dep15"].every(isDeposit)).toBe(true);
  expect(["deposit", "dep-2", "DEP", "xdep"].some(isDeposit)).toBe(false);
});
