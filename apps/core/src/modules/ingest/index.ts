import type { Subscription } from "@pushstack/bus";
import type { CoreContext } from "../../context";
import { startIngestConsumer } from "./consumer";
import { startResponders } from "./responders";

export { processItem, handleBatch } from "./consumer";

/** Core's side of the edge: the ingest stream consumer and the request-reply responders. */
export async function startIngest(ctx: CoreContext): Promise<{ stop(): Promise<void> }> {
  const subs: Subscription[] = [...(await startResponders(ctx)), await startIngestConsumer(ctx)];
  return {
    async stop() {
      await Promise.allSettled(subs.map((s) => s.stop()));
    },
  };
}
