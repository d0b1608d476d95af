import { forbidden } from "@pushstack/http";
import type { Actor } from "../../context";

/** Billing is account-wide: an API key limited to one app cannot read or move the account's money. */
export function assertAccountWide(actor: Actor) {
  if (actor.appId !== null) throw forbidden(`this API key is limited to app ${actor.appId}; billing needs an account-wide credential`);
}
