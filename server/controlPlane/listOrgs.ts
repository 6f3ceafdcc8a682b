import type { z } from "zod";
import type { Db } from "../db/client";
import type { Organization } from "../db/generated/sqlite/client";
import { keyset, olderThan, type ListQuery } from "../http/cursor";
import type { Principal } from "../governance/principal";
import { visibleTo } from "./orgVisibility";
import { orgView } from "./views";

/** The organizations the caller sees, newest first. */
export async function listOrgs(db: Db, principal: Principal, query: z.output<typeof ListQuery>, secret: Buffer) {
  const { after, take, page } = keyset<Organization>(secret, "cp-orgs", query, (last) => [
    last.createdAt.toISOString(),
    last.orgDid,
  ]);
  const rows = await db.organization.findMany({
    where: {
      AND: [visibleTo(principal), olderThan(after, "createdAt", "orgDid")],
    },
    orderBy: [{ createdAt: "desc" }, { orgDid: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(orgView), pagination };
}
