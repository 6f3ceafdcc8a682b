import { notifyChange } from "../db/changes";
import type { Db } from "../db/client";

/** The change channel of webhooks (server/db/changes.ts), which the console's live views follow. */
export const WEBHOOKS_CHANNEL = "webhooks";

/** Tells the live views, once `tx` commits, that a webhook logged a delivery or changed state. */
export function webhookChanged(tx: Db, w: { id: string; orgDid: string }): void {
  notifyChange(tx, { channel: WEBHOOKS_CHANNEL, org: w.orgDid, id: w.id });
}
