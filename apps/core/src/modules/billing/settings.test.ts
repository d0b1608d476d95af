import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, redactConfig, ConfigError } from "@pushstack/config";

// Billing's settings live in @pushstack/config; checked here, beside the code that reads them.
const dir = () => mkdtempSync(join(tmpdir(), "cfg-billing-"));

test("billing settings are optional and validated", () => {
  const c = loadConfig({ DATA_DIR: dir() });
  expect([c.smtpUrl, c.btcpayUrl, c.btcpayApiKey, c.btcpayStoreId, c.btcpayWebhookSecret, c.publicUrl]).toEqual([null, null, null, null, null, null]);
  expect(c.mailFrom).toContain("@");
  expect(() => loadConfig({ DATA_DIR: dir(), SMTP_URL: "http://mail" })).toThrow(/SMTP_URL/);
  expect(() => loadConfig({ DATA_DIR: dir(), PUBLIC_URL: "ftp://x" })).toThrow(/PUBLIC_URL/);
  expect(() => loadConfig({ DATA_DIR: dir(), BTCPAY_URL: "https://pay.example" })).toThrow(ConfigError);
  const full = loadConfig({ DATA_DIR: dir(), BTCPAY_URL: "https://pay.example/", BTCPAY_API_KEY: "k", BTCPAY_STORE_ID: "s", BTCPAY_WEBHOOK_SECRET: "w", PUBLIC_URL: "https://push.example/" });
  expect(full.btcpayUrl).toBe("https://pay.example");
  expect(full.publicUrl).toBe("https://push.example");
});

test("redaction hides the SMTP password, the BTCPay API key and the webhook secret", () => {
  const c = loadConfig({
    DATA_DIR: dir(),
    SMTP_URL: "smtps://mailer:sm7p-s3cret@mail.example:465/?pass=sm7p-s3cret",
    BTCPAY_URL: "https://pay.example",
    BTCPAY_API_KEY: "greenfield-key-123",
    BTCPAY_STORE_ID: "store",
    BTCPAY_WEBHOOK_SECRET: "whsec-456",
  });
  const text = JSON.stringify(redactConfig(c));
  for (const secret of ["sm7p-s3cret", "greenfield-key-123", "whsec-456"]) expect(text).not.toContain(secret);
  expect(text).toContain("smtps://mailer:***@mail.example:465");
  expect(text).toContain("https://pay.example");
});
