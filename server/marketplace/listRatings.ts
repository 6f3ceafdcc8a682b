import type { z } from "zod";
import type { Db } from "../db/client";
import type { ConnectorRating } from "../db/generated/sqlite/client";
import { keyset, olderThan } from "../http/cursor";
import { connectorOrThrow } from "./catalogue";
import type { ListQuery } from "../http/listSchemas";
import { ratingView } from "./ratingView";

/** A connector's ratings, every organization's (a store's reviews are public), newest change first. */
export async function listRatings(db: Db, connectorId: string, query: z.output<typeof ListQuery>, secret: Buffer) {
  const connector = connectorOrThrow(connectorId).definition;
  const { after, take, page } = keyset<ConnectorRating>(
    secret,
    `connector-ratings:${connector.connector_id}`,
    query,
    (last) => [last.updatedAt.toISOString(), last.id],
  );
  const rows = await db.connectorRating.findMany({
    where: {
      connectorId: connector.connector_id,
      ...olderThan(after, "updatedAt", "id"),
    },
    orderBy: [{ updatedAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(ratingView), pagination };
}
