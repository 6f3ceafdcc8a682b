import { type Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { eventViews } from "./eventViews";

/** One of the organization's events with what it matched, or 404. */
export async function getEvent(db: Db, principal: Principal, id: string) {
  const row = await db.event.findFirst({
    where: { id, orgDid: principal.orgDid },
    include: { matches: { orderBy: { subscriptionId: "asc" } } },
  });
  if (!row) throw NotFound("event", id);
  return (await eventViews(db, [row]))[0]!;
}
