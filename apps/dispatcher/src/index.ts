/** @pushstack/dispatcher: the send-job consumer and the delivery transports. */
export { createDispatcher, ensureSendStreams, outcome, type DispatcherOptions } from "./dispatcher";
export { startDispatcher, type TransportOptions } from "./runtime";
export { createTransports } from "./transports";
