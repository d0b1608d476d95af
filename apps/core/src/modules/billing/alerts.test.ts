import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { billingMail } from "@pushstack/schema";
import { startSmtpPeer, type SmtpPeer } from "@pushstack/testing";
import { startTestCore, type TestCore } from "../../testing/harness";
import { admin, createApp, addDevices, adjust, closeDay, balance, dayAt } from "./testkit";

let t: TestCore;
let smtp: SmtpPeer;
let adminToken: string;
beforeAll(async () => {
  smtp = await startSmtpPeer();
  t = await startTestCore({ SMTP_URL: smtp.url, MAIL_FROM: "PushStack Billing <billing@pushstack.test>", PUBLIC_URL: "https://push.example" });
  adminToken = (await admin(t)).token;
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const mailsTo = (email: string) => smtp.messages.filter((m) => m.to.includes(email));
/** Delivers whatever is due now, so "no second e-mail" is checked after delivery, not before it. */
const drain = async () => expect((await t.req("POST", "/api/v3/admin/jobs/billing-mail", { token: adminToken, body: {} })).status).toBe(200);

describe("low-balance alert", () => {
  test("sent over SMTP when the balance drops below 3 days of projected usage, once per episode", async () => {
    const u = await t.user({ plan: "pro" }); // 163 cents a day → alert below 489
    await adjust(t, adminToken, u.id, 1000);
    await drain();
    expect(mailsTo(u.email)).toEqual([]);
    await adjust(t, adminToken, u.id, -500); // 500: still 3 days
    await drain();
    expect(mailsTo(u.email)).toEqual([]);
    await adjust(t, adminToken, u.id, -20); // 480 < 489
    const mail = await smtp.waitFor((m) => m.to.includes(u.email));
    expect(mail.from).toBe("billing@pushstack.test");
    expect(mail.subject).toBe("PushStack: low balance, about 2 days left");
    expect(mail.text).toContain("$4.80");
    expect(mail.text).toContain("$1.63 per day");
    expect(mail.text).toContain("https://push.example/billing");
    expect((await balance(t, u.token)).low_balance).toBe(true);
    // the same episode: no second e-mail, even as the balance keeps dropping
    await adjust(t, adminToken, u.id, -100);
    await closeDay(t, adminToken, dayAt(0));
    await drain();
    expect(mailsTo(u.email).length).toBe(1);
    // back above 3 days ends the episode; the next drop is a new one
    await adjust(t, adminToken, u.id, 2000);
    expect((await balance(t, u.token)).low_balance).toBe(false);
    await adjust(t, adminToken, u.id, -2000);
    await smtp.waitFor(() => mailsTo(u.email).length === 2);
    expect(mailsTo(u.email).length).toBe(2);
  });

  test("the daily close sends it; the threshold follows installs", async () => {
    const u = await t.user({ plan: "team" });
    const app = await createApp(t, u.token);
    await addDevices(t, app, 15000); // 496.67 + 270 = 766 a day → alert below 2298
    await adjust(t, adminToken, u.id, 3000);
    const r = await closeDay(t, adminToken, dayAt(0)); // 3000 - 766 = 2234
    // the run delivers what it queued before answering (unless the per-minute mail job got there first)
    expect(typeof r.alerts_sent).toBe("number");
    await smtp.waitFor((m) => m.to.includes(u.email));
    expect(mailsTo(u.email).length).toBe(1);
    expect(mailsTo(u.email)[0]!.text).toContain("$22.34");
  });

  test("Free is never alerted", async () => {
    const u = await t.user();
    await adjust(t, adminToken, u.id, 1);
    await closeDay(t, adminToken, dayAt(0));
    await drain();
    expect(mailsTo(u.email)).toEqual([]);
  });
});

describe("without SMTP", () => {
  test("the alert is recorded and marked skipped, not retried forever", async () => {
    const bare = await startTestCore();
    try {
      const a = await bare.user({ admin: true });
      const u = await bare.user({ plan: "pro" });
      await bare.req("POST", `/api/v3/admin/users/${u.id}/balance-adjustments`, { token: a.token, body: { amount_cents: 100, reason: "low" } });
      await bare.req("POST", "/api/v3/admin/jobs/billing-mail", { token: a.token, body: {} });
      // delivery also starts in the background after the adjustment commits: wait for whichever settles it
      let rows = await bare.ctx.db.select().from(billingMail).where(eq(billingMail.userId, u.id));
      for (let i = 0; i < 50 && rows.some((m) => m.status === "pending"); i++) {
        await Bun.sleep(50);
        rows = await bare.ctx.db.select().from(billingMail).where(eq(billingMail.userId, u.id));
      }
      expect(rows.map((m) => [m.kind, m.status, m.attempts])).toEqual([["low_balance", "skipped", 1]]);
    } finally {
      await bare.close();
    }
  });
});
