/**
 * A cryptocurrency payment processor, as billing needs it. One implementation today (BTCPay Server,
 * `btcpay.ts`); another processor fits behind the same four calls.
 */

export type TopUpCurrency = "BTC" | "ETH" | "USDT";

export type InvoiceState = "new" | "processing" | "settled" | "expired" | "invalid";

export interface ProcessorInvoice {
  id: string;
  state: InvoiceState;
  /** Processor-specific detail, e.g. BTCPay's additionalStatus (PaidOver, PaidPartial, PaidLate, Marked). */
  detail: string;
  checkoutUrl: string | null;
  expiresAt: Date;
  /** The chosen cryptocurrency's payment data (null when the processor offers none for it). */
  payment: {
    method: string;
    /** One address per invoice: never reused for another top-up. */
    address: string;
    /** Exact amount due, decimal text. */
    amount: string;
    /** Paid so far, decimal text. */
    paid: string;
    rate: string | null;
  } | null;
}

export interface ProcessorEvent {
  /** Unique per delivery attempt chain (for logs). */
  deliveryId: string;
  invoiceId: string;
  kind: "settled" | "processing" | "expired" | "invalid" | "payment_received" | "other";
  overPaid: boolean;
  partiallyPaid: boolean;
  afterExpiration: boolean;
  manuallyMarked: boolean;
  type: string;
}

export interface PaymentProcessor {
  readonly name: string;
  createInvoice(req: { amountCents: number; currency: TopUpCurrency; orderId: string; expiresInMinutes: number; buyerEmail?: string; redirectUrl?: string }): Promise<ProcessorInvoice>;
  getInvoice(invoiceId: string, currency: TopUpCurrency): Promise<ProcessorInvoice>;
  /** true only when the signature over the exact raw body is valid (constant-time compare). */
  verifyWebhook(rawBody: string, headers: Headers): boolean;
  /** null when the body is not an event this processor sends. */
  parseWebhook(rawBody: string): ProcessorEvent | null;
}

/** The processor failed or answered something unusable; the route turns it into a 502/503. */
export class ProcessorError extends Error {
  override name = "ProcessorError";
}
