import type { Config, Logger } from "@pushstack/config";
import type { Bus } from "@pushstack/bus";
import { createTransports, type FcmTransportOptions, type ApnsTransportOptions, type WebPushTransportOptions } from "./transports";
import { createDispatcher } from "./dispatcher";

export interface TransportOptions {
  fcm?: FcmTransportOptions;
  apns?: ApnsTransportOptions;
  webpush?: WebPushTransportOptions;
}

/**
 * A dispatcher on a bus: the transports (real provider endpoints unless tests point them at peers) and
 * the job consumer. Returns its stop function. Used by `start:dispatcher` and, in embedded mode, by the
 * single process.
 */
export async function startDispatcher(opts: { config: Config; log: Logger; bus: Bus; transports?: TransportOptions; concurrency?: number }) {
  const transports = createTransports({
    fcm: opts.transports?.fcm,
    apns: opts.transports?.apns,
    webpush: { ...opts.transports?.webpush, allowedHosts: [...opts.config.webpushAllowedHosts, ...(opts.transports?.webpush?.allowedHosts ?? [])] },
  });
  const dispatcher = createDispatcher({ bus: opts.bus, log: opts.log, masterKey: opts.config.masterKey, transports, concurrency: opts.concurrency });
  await dispatcher.start();
  return async () => {
    await dispatcher.stop();
    await transports.close();
  };
}
