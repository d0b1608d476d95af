import { createHmac, randomBytes, randomUUID } from "node:crypto";

/**
 * A local stand-in for BTCPay Server's Greenfield API, for billing tests:
 * - `POST /api/v1/stores/{store}/invoices` (USD amount, `checkout.expirationMinutes`), authorised by
 *   `Authorization: token <api key>`; a fresh address per invoice and on-chain method (BTC, ETH, USDT),
 *   plus a Lightning method that a client must not pick as "an address";
 * - `GET .../invoices/{id}`, `GET .../invoices/{id}/payment-methods` (v1 and v2 field names),
 *   `POST .../invoices/{id}/payment-methods/{method}/activate` (with `lazyPaymentMethods`);
 * - the customer's side (`pay`, `confirm`, `expire`, `markSettled`, `markInvalid`) moves an invoice as
 *   BTCPay does and returns the webhook events it would send, signed like BTCPay
 *   (`BTCPay-Sig: sha256=<hex HMAC-SHA256 of the raw body>`), for `deliver` to post.
 */

export type PeerCurrency = "BTC" | "ETH" | "USDT";

interface PeerMethod {
  paymentMethodId: string;
  currency: PeerCurrency;
  lightning: boolean;
  /** Smallest units per whole coin exponent. */
  decimals: number;
  rate: string;
  destination: string;
  amountUnits: bigint;
  paidUnits: bigint;
  activated: boolean;
}

export interface PeerInvoice {
  id: string;
  storeId: string;
  amount: string;
  currency: string;
  status: "New" | "Processing" | "Settled" | "Expired" | "Invalid";
  additionalStatus: "None" | "PaidLate" | "PaidPartial" | "Marked" | "Invalid" | "PaidOver";
  metadata: Record<string, unknown>;
  createdTime: number;
  expirationTime: number;
  checkout: Record<string, unknown>;
  methods: PeerMethod[];
}

export interface PeerWebhook {
  type: string;
  body: string;
  headers: Record<string, string>;
}

export interface BtcpayPeerOptions {
  apiKey?: string;
  storeId?: string;
  webhookSecret?: string;
  /** USD per coin, decimal text. */
  rates?: Partial<Record<PeerCurrency, string>>;
  /** Payment methods start without an address until activated (a BTCPay store setting). */
  lazyPaymentMethods?: boolean;
  /** How `deliver` posts a webhook (tests: straight into the app). Default: `fetch(webhookUrl)`. */
  deliver?: (body: string, headers: Record<string, string>) => Promise<{ status: number }>;
  webhookUrl?: string;
}

export interface BtcpayPeer {
  url: string;
  apiKey: string;
  storeId: string;
  webhookSecret: string;
  /** The BTCPAY_* settings that point a server at this peer. */
  env: Record<string, string>;
  invoices: Map<string, PeerInvoice>;
  /** Every API request: method, path, whether it was authorised. */
  requests: { method: string; path: string; authorised: boolean }[];
  /** The customer pays `amount` of `currency` ("exact", "over", "under" or decimal text): payment seen, not confirmed. */
  pay(invoiceId: string, opts?: { currency?: PeerCurrency; amount?: "exact" | "over" | "under" | string }): PeerWebhook[];
  /** Confirmations arrive: a fully paid invoice settles (PaidOver when overpaid). */
  confirm(invoiceId: string): PeerWebhook[];
  /** The invoice's time runs out (partiallyPaid when something was paid). */
  expire(invoiceId: string): PeerWebhook[];
  /** The store's administrator marks it settled / invalid. */
  markSettled(invoiceId: string): PeerWebhook[];
  markInvalid(invoiceId: string): PeerWebhook[];
  /** A signed event as BTCPay sends it (extra fields merged into the body). */
  webhook(type: string, invoiceId: string, extra?: Record<string, unknown>, secret?: string): PeerWebhook;
  sign(body: string, secret?: string): string;
  /** Posts each webhook `times` times, all at once; answers the statuses. */
  deliver(hooks: PeerWebhook | PeerWebhook[], times?: number): Promise<number[]>;
  close(): Promise<void>;
}

const DEFAULT_RATES: Record<PeerCurrency, string> = { BTC: "65000.00", ETH: "3200.00", USDT: "1.00" };
const DECIMALS: Record<PeerCurrency, number> = { BTC: 8, ETH: 18, USDT: 6 };

const toCentsOfUsd = (usd: string) => {
  const [i, f = ""] = usd.split(".");
  return BigInt(i!) * 100n + BigInt((f + "00").slice(0, 2));
};
const formatUnits = (units: bigint, decimals: number) => {
  const neg = units < 0n;
  const s = (neg ? -units : units).toString().padStart(decimals + 1, "0");
  return `${neg ? "-" : ""}${s.slice(0, -decimals)}.${s.slice(-decimals)}`;
};
const parseUnits = (text: string, decimals: number) => {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new Error(`bad amount ${text}`);
  return BigInt(m[1]! + (m[2] ?? "").padEnd(decimals, "0").slice(0, decimals));
};

function newAddress(currency: PeerCurrency, lightning: boolean) {
  if (lightning) return "lnbcrt" + randomBytes(40).toString("hex");
  return currency === "BTC" ? "bcrt1q" + randomBytes(20).toString("hex") : "0x" + randomBytes(20).toString("hex");
}

export async function startBtcpayPeer(opts: BtcpayPeerOptions = {}): Promise<BtcpayPeer> {
  const apiKey = opts.apiKey ?? randomBytes(20).toString("hex");
  const storeId = opts.storeId ?? randomBytes(16).toString("base64url");
  const webhookSecret = opts.webhookSecret ?? randomBytes(16).toString("base64url");
  const rates = { ...DEFAULT_RATES, ...opts.rates };
  const invoices = new Map<string, PeerInvoice>();
  const requests: BtcpayPeer["requests"] = [];

  let origin = ""; // set once the server listens
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

  const invoiceJson = (inv: PeerInvoice) => ({
    id: inv.id,
    storeId: inv.storeId,
    amount: inv.amount,
    currency: inv.currency,
    type: "Standard",
    checkoutLink: `${origin}/i/${inv.id}`,
    createdTime: inv.createdTime,
    expirationTime: inv.expirationTime,
    monitoringExpiration: inv.expirationTime + 86400,
    status: inv.status,
    additionalStatus: inv.additionalStatus,
    archived: false,
    metadata: inv.metadata,
    checkout: inv.checkout,
  });

  const totalPaidUsdCents = (inv: PeerInvoice) =>
    inv.methods.reduce((sum, m) => sum + (m.paidUnits * toCentsOfUsd(m.rate)) / 10n ** BigInt(m.decimals), 0n);

  const methodJson = (inv: PeerInvoice, m: PeerMethod) => {
    // totalPaid: every method's payments converted to this method's currency
    const totalUnits = inv.methods.reduce((sum, o) => sum + (o === m ? o.paidUnits : (o.paidUnits * toCentsOfUsd(o.rate) * 10n ** BigInt(m.decimals)) / (toCentsOfUsd(m.rate) * 10n ** BigInt(o.decimals))), 0n);
    const id = m.paymentMethodId;
    return {
      paymentMethodId: id,
      paymentMethod: m.lightning ? `${m.currency}-LightningNetwork` : m.currency,
      cryptoCode: m.currency,
      currency: m.currency,
      destination: m.activated ? m.destination : "",
      paymentLink: m.activated ? `${m.currency.toLowerCase()}:${m.destination}?amount=${formatUnits(m.amountUnits, m.decimals)}` : null,
      rate: m.rate,
      paymentMethodPaid: formatUnits(m.paidUnits, m.decimals),
      totalPaid: formatUnits(totalUnits, m.decimals),
      due: formatUnits(m.amountUnits - totalUnits, m.decimals),
      amount: formatUnits(m.amountUnits, m.decimals),
      networkFee: formatUnits(0n, m.decimals),
      payments: [],
      activated: m.activated,
    };
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      const authorised = req.headers.get("authorization") === `token ${apiKey}`;
      requests.push({ method: req.method, path: url.pathname, authorised });
      if (!authorised) return json(401, { code: "unauthenticated", message: "Authentication is required for accessing this endpoint" });
      const m = /^\/api\/v1\/stores\/([^/]+)\/invoices(?:\/([^/]+)(\/payment-methods(?:\/([^/]+)\/activate)?)?)?$/.exec(url.pathname);
      if (!m) return json(404, { code: "not-found", message: "not found" });
      if (decodeURIComponent(m[1]!) !== storeId) return json(403, { code: "unauthorized", message: "store not accessible with this key" });
      const [, , invoiceId, pmPath, activate] = m;
      if (!invoiceId && req.method === "POST") {
        let body: any;
        try {
          body = await req.json();
        } catch {
          return json(400, { code: "invalid-json", message: "invalid JSON" });
        }
        if (typeof body?.amount !== "string" || !/^\d+(\.\d{1,2})?$/.test(body.amount) || body.currency !== "USD") {
          return json(422, [{ path: "amount", message: "amount must be a USD decimal text" }]);
        }
        const now = Math.floor(Date.now() / 1000);
        const minutes = Number(body.checkout?.expirationMinutes ?? 15);
        const usdCents = toCentsOfUsd(body.amount);
        const methods: PeerMethod[] = [];
        for (const currency of ["BTC", "ETH", "USDT"] as PeerCurrency[]) {
          const d = DECIMALS[currency];
          // amount due, rounded up to the coin's smallest unit so that paying it covers the invoice
          const den = toCentsOfUsd(rates[currency]);
          const amountUnits = (usdCents * 10n ** BigInt(d) + den - 1n) / den;
          methods.push({ paymentMethodId: `${currency}-CHAIN`, currency, lightning: false, decimals: d, rate: rates[currency], destination: newAddress(currency, false), amountUnits, paidUnits: 0n, activated: !opts.lazyPaymentMethods });
        }
        const btc = methods[0]!;
        methods.push({ ...btc, paymentMethodId: "BTC-LN", lightning: true, destination: newAddress("BTC", true), activated: true });
        const inv: PeerInvoice = {
          id: randomBytes(16).toString("base64url").slice(0, 22),
          storeId,
          amount: body.amount,
          currency: "USD",
          status: "New",
          additionalStatus: "None",
          metadata: body.metadata ?? {},
          createdTime: now,
          expirationTime: now + minutes * 60,
          checkout: body.checkout ?? {},
          methods,
        };
        invoices.set(inv.id, inv);
        return json(200, invoiceJson(inv));
      }
      const inv = invoiceId ? invoices.get(decodeURIComponent(invoiceId)) : undefined;
      if (!inv) return json(404, { code: "invoice-not-found", message: "The invoice was not found" });
      if (activate && req.method === "POST") {
        const pm = inv.methods.find((x) => x.paymentMethodId === decodeURIComponent(activate) || (!x.lightning && x.currency === decodeURIComponent(activate)));
        if (!pm) return json(404, { code: "paymentmethod-not-found", message: "payment method not found" });
        pm.activated = true;
        return json(200, {});
      }
      if (pmPath && req.method === "GET") return json(200, inv.methods.map((pm) => methodJson(inv, pm)));
      if (!pmPath && req.method === "GET") return json(200, invoiceJson(inv));
      return json(405, { code: "method-not-allowed", message: "method not allowed" });
    },
  });

  origin = server.url.origin;
  const sign = (body: string, secret = webhookSecret) => "sha256=" + createHmac("sha256", secret).update(body, "utf8").digest("hex");

  const webhook = (type: string, invoiceId: string, extra: Record<string, unknown> = {}, secret?: string): PeerWebhook => {
    const inv = invoices.get(invoiceId);
    const body = JSON.stringify({
      deliveryId: randomUUID(),
      webhookId: "peer-webhook",
      originalDeliveryId: randomUUID(),
      isRedelivery: false,
      type,
      timestamp: Math.floor(Date.now() / 1000),
      storeId,
      invoiceId,
      metadata: inv?.metadata ?? {},
      ...extra,
    });
    return { type, body, headers: { "content-type": "application/json", "btcpay-sig": sign(body, secret), "user-agent": "BTCPayServer" } };
  };

  const get = (id: string) => {
    const inv = invoices.get(id);
    if (!inv) throw new Error(`no invoice ${id}`);
    return inv;
  };
  const onChainMethod = (inv: PeerInvoice, currency: PeerCurrency) => inv.methods.find((x) => !x.lightning && x.currency === currency)!;
  const paidCents = (inv: PeerInvoice) => totalPaidUsdCents(inv);
  const dueCents = (inv: PeerInvoice) => toCentsOfUsd(inv.amount);

  return {
    url: server.url.origin,
    apiKey,
    storeId,
    webhookSecret,
    env: { BTCPAY_URL: server.url.origin, BTCPAY_API_KEY: apiKey, BTCPAY_STORE_ID: storeId, BTCPAY_WEBHOOK_SECRET: webhookSecret },
    invoices,
    requests,
    pay(invoiceId, o = {}) {
      const inv = get(invoiceId);
      const pm = onChainMethod(inv, o.currency ?? "BTC");
      const amount = o.amount ?? "exact";
      const units =
        amount === "exact" ? pm.amountUnits : amount === "over" ? pm.amountUnits + pm.amountUnits / 10n : amount === "under" ? pm.amountUnits - pm.amountUnits / 10n : parseUnits(amount, pm.decimals);
      pm.paidUnits += units;
      const afterExpiration = inv.status === "Expired";
      const events = [webhook("InvoiceReceivedPayment", invoiceId, { afterExpiration, paymentMethodId: pm.paymentMethodId, payment: { value: formatUnits(units, pm.decimals), status: "Processing", destination: pm.destination } })];
      if (afterExpiration) {
        inv.additionalStatus = "PaidLate";
        return events;
      }
      if (paidCents(inv) >= dueCents(inv)) {
        inv.status = "Processing";
        inv.additionalStatus = paidCents(inv) > dueCents(inv) ? "PaidOver" : "None";
        events.push(webhook("InvoiceProcessing", invoiceId, { overPaid: inv.additionalStatus === "PaidOver" }));
      } else {
        inv.additionalStatus = "PaidPartial";
      }
      return events;
    },
    confirm(invoiceId) {
      const inv = get(invoiceId);
      if (inv.status !== "Processing") return [];
      inv.status = "Settled";
      return [webhook("InvoicePaymentSettled", invoiceId), webhook("InvoiceSettled", invoiceId, { manuallyMarked: false, overPaid: inv.additionalStatus === "PaidOver" })];
    },
    expire(invoiceId) {
      const inv = get(invoiceId);
      if (inv.status !== "New") return [];
      inv.status = "Expired";
      return [webhook("InvoiceExpired", invoiceId, { partiallyPaid: paidCents(inv) > 0n, manuallyMarked: false })];
    },
    markSettled(invoiceId) {
      const inv = get(invoiceId);
      inv.status = "Settled";
      inv.additionalStatus = "Marked";
      return [webhook("InvoiceSettled", invoiceId, { manuallyMarked: true, overPaid: false })];
    },
    markInvalid(invoiceId) {
      const inv = get(invoiceId);
      inv.status = "Invalid";
      inv.additionalStatus = "Marked";
      return [webhook("InvoiceInvalid", invoiceId, { manuallyMarked: true })];
    },
    webhook,
    sign,
    async deliver(hooks, times = 1) {
      const list = Array.isArray(hooks) ? hooks : [hooks];
      const post =
        opts.deliver ??
        (async (body: string, headers: Record<string, string>) => {
          if (!opts.webhookUrl) throw new Error("btcpay peer: no deliver function or webhookUrl");
          const res = await fetch(opts.webhookUrl, { method: "POST", body, headers });
          await res.arrayBuffer();
          return { status: res.status };
        });
      const out: number[] = [];
      for (const h of list) {
        const r = await Promise.all(Array.from({ length: times }, () => post(h.body, h.headers)));
        out.push(...r.map((x) => x.status));
      }
      return out;
    },
    async close() {
      await server.stop(true);
    },
  };
}
