import type { Subscription } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";

/** A webhook of the caller's organization, or 404: the one tenant check every webhook service starts with. */
export async function findWebhook(db: Db, principal: Principal, id: string): Promise<Subscription> {
  const row = await db.subscription.findFirst({ where: { id, orgDid: principal.orgDid, kind: "webhook" } });
  if (!row) throw NotFound("webhook", id);
  return row;
}
