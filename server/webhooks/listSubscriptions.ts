import type { z } from "zod";
import type { Subscription } from "../db/generated/sqlite/client";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { keyset, olderThan } from "../http/cursor";
import type { SubscriptionListQuery } from "./schemas";
import { subscriptionView } from "./views";
import { webhookHealth } from "./webhookHealth";

/** Both kinds, newest first: webhooks with their health, agent triggers with the agent they start. */
export async function listSubscriptions(
  db: Db,
  principal: Principal,
  query: z.output<typeof SubscriptionListQuery>,
  secret: Buffer,
) {
  const { after, take, page } = keyset<Subscription>(secret, "webhooks", query, (last) => [
    last.createdAt.toISOString(),
    last.id,
  ]);
  const rows = await db.subscription.findMany({
    where: {
      orgDid: principal.orgDid,
      ...(query.kind ? { kind: query.kind } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...olderThan(after, "createdAt", "id"),
    },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  const data = await Promise.all(
    items.map(async (s) => subscriptionView(s, s.kind === "webhook" ? await webhookHealth(db, s) : undefined)),
  );
  return { data, pagination };
}
