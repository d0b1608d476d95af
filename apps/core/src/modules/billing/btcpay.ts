import { createHmac, timingSafeEqual } from "node:crypto";
import { centsToUsd } from "./money";
import { ProcessorError, type InvoiceState, type PaymentProcessor, type ProcessorEvent, type ProcessorInvoice, type TopUpCurrency } from "./processor";

/**
 * BTCPay Server through its Greenfield API (self-hostable, public API, signed webhooks):
 * - `POST /api/v1/stores/{store}/invoices` creates a USD invoice; BTCPay converts it at its rate and
 *   derives a fresh address per invoice and payment method;
 * - `GET .../invoices/{id}` and `.../invoices/{id}/payment-methods` give status, address and amounts
 *   (lazy payment methods are activated with `POST .../payment-methods/{method}/activate`);
 * - webhooks carry `BTCPay-Sig: sha256=<hex HMAC-SHA256 of the raw body with the webhook secret>`.
 * Both payment-method field spellings are read: v1 (`paymentMethod`, `cryptoCode`) and v2
 * (`paymentMethodId`, `currency`).
 */

const STATES: Record<string, InvoiceState> = { New: "new", Processing: "processing", Settled: "settled", Expired: "expired", Invalid: "invalid" };

const EVENTS: Record<string, ProcessorEvent["kind"]> = {
  InvoiceSettled: "settled",
  InvoiceProcessing: "processing",
  InvoiceExpired: "expired",
  InvoiceInvalid: "invalid",
  InvoiceReceivedPayment: "payment_received",
};

interface PaymentMethodData {
  paymentMethodId?: string;
  paymentMethod?: string;
  currency?: string;
  cryptoCode?: string;
  destination?: string;
  rate?: string;
  amount?: string;
  paymentMethodPaid?: string;
  totalPaid?: string;
  activated?: boolean;
}

/** On-chain methods only: a Lightning invoice is not "an address". */
function onChain(pm: PaymentMethodData, currency: TopUpCurrency): boolean {
  const id = pm.paymentMethodId ?? pm.paymentMethod ?? "";
  const code = (pm.currency ?? pm.cryptoCode ?? id.split(/[-_]/)[0] ?? "").toUpperCase();
  if (code !== currency) return false;
  return !/lightning|lnurl|-ln$/i.test(id);
}

export function createBtcpayProcessor(cfg: { url: string; apiKey: string; storeId: string; webhookSecret: string; timeoutMs?: number }): PaymentProcessor {
  const base = `${cfg.url}/api/v1/stores/${encodeURIComponent(cfg.storeId)}`;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: { authorization: `token ${cfg.apiKey}`, "content-type": "application/json", accept: "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(cfg.timeoutMs ?? 15_000),
      });
    } catch (err) {
      throw new ProcessorError(`BTCPay unreachable: ${(err as Error).message}`);
    }
    const text = await res.text();
    if (!res.ok) throw new ProcessorError(`BTCPay ${method} ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    try {
      return (text ? JSON.parse(text) : null) as T;
    } catch {
      throw new ProcessorError(`BTCPay ${method} ${path} answered invalid JSON`);
    }
  }

  async function load(invoiceId: string, currency: TopUpCurrency): Promise<ProcessorInvoice> {
    const id = encodeURIComponent(invoiceId);
    const inv = await call<Record<string, any>>("GET", `/invoices/${id}`);
    let methods = await call<PaymentMethodData[]>("GET", `/invoices/${id}/payment-methods`);
    let pm = Array.isArray(methods) ? methods.find((m) => onChain(m, currency)) : undefined;
    if (pm && pm.activated === false && STATES[inv.status] === "new") {
      // lazy payment methods: the address exists only once activated
      await call("POST", `/invoices/${id}/payment-methods/${encodeURIComponent(pm.paymentMethodId ?? pm.paymentMethod ?? currency)}/activate`);
      methods = await call<PaymentMethodData[]>("GET", `/invoices/${id}/payment-methods`);
      pm = methods.find((m) => onChain(m, currency));
    }
    const state = STATES[String(inv.status)];
    if (!state || typeof inv.id !== "string") throw new ProcessorError(`BTCPay invoice ${invoiceId} has an unknown shape or status`);
    return {
      id: inv.id,
      state,
      detail: String(inv.additionalStatus ?? "None"),
      checkoutUrl: typeof inv.checkoutLink === "string" ? inv.checkoutLink : null,
      expiresAt: new Date(Number(inv.expirationTime) * 1000),
      payment:
        pm && pm.destination && pm.amount
          ? {
              method: pm.paymentMethodId ?? pm.paymentMethod ?? currency,
              address: pm.destination,
              amount: pm.amount,
              paid: pm.paymentMethodPaid ?? pm.totalPaid ?? "0",
              rate: pm.rate ?? null,
            }
          : null,
    };
  }

  return {
    name: "btcpay",
    async createInvoice(req) {
      const inv = await call<Record<string, any>>("POST", "/invoices", {
        amount: centsToUsd(req.amountCents),
        currency: "USD",
        metadata: { orderId: req.orderId, ...(req.buyerEmail ? { buyerEmail: req.buyerEmail } : {}) },
        checkout: {
          expirationMinutes: req.expiresInMinutes,
          // an exact amount: no tolerance, an underpayment is not "paid"
          paymentTolerance: 0,
          ...(req.redirectUrl ? { redirectURL: req.redirectUrl } : {}),
        },
      });
      if (typeof inv?.id !== "string") throw new ProcessorError("BTCPay created an invoice without an id");
      return load(inv.id, req.currency);
    },
    getInvoice: load,
    verifyWebhook(rawBody, headers) {
      const got = headers.get("btcpay-sig") ?? "";
      const m = /^sha256=([0-9a-f]{64})$/i.exec(got.trim());
      if (!m) return false;
      const want = createHmac("sha256", cfg.webhookSecret).update(rawBody, "utf8").digest();
      const given = Buffer.from(m[1]!, "hex");
      return given.length === want.length && timingSafeEqual(given, want);
    },
    parseWebhook(rawBody) {
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(rawBody);
      } catch {
        return null;
      }
      if (!e || typeof e !== "object" || typeof e.type !== "string" || typeof e.invoiceId !== "string") return null;
      return {
        type: e.type,
        deliveryId: typeof e.deliveryId === "string" ? e.deliveryId : "",
        invoiceId: e.invoiceId,
        kind: EVENTS[e.type] ?? "other",
        overPaid: e.overPaid === true,
        partiallyPaid: e.partiallyPaid === true,
        afterExpiration: e.afterExpiration === true,
        manuallyMarked: e.manuallyMarked === true,
      };
    },
  };
}
