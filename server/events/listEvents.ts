import type { z } from "zod";
import { type Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { EventListQuery } from "./schemas";
import { type EventWithMatches, eventViews } from "./eventViews";

/** The organization's events, newest first, with what each matched. */
export async function listEvents(db: Db, principal: Principal, query: z.output<typeof EventListQuery>, secret: Buffer) {
  const { after, take, page } = keyset<EventWithMatches>(secret, "events", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.event.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.type ? { type: query.type } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    include: { matches: { orderBy: { subscriptionId: "asc" } } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: await eventViews(db, items), pagination };
}
