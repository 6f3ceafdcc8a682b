import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { webhookView } from "./views";
import { findWebhook } from "./findWebhook";
import { webhookHealth } from "./webhookHealth";

/** A webhook's settings with its health, read from the delivery log now. */
export async function getWebhook(db: Db, principal: Principal, id: string) {
  const row = await findWebhook(db, principal, id);
  return webhookView(row, await webhookHealth(db, row));
}
