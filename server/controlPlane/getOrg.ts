import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { visibleTo } from "./orgVisibility";
import { orgView } from "./views";

/** An organization the caller sees (its own, or one it created), or 404. */
export async function getOrg(db: Db, principal: Principal, orgDid: string) {
  const row = await db.organization.findFirst({ where: { orgDid, ...visibleTo(principal) } });
  if (!row) throw NotFound("organization", orgDid);
  return orgView(row);
}
