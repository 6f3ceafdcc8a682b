import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { forgetRoutingCatalogue } from "./routingCatalogue";
import { parseTarget } from "./routingRules";

/** Removes the organization's routing rule for a target (404 when it has none). */
export async function removeRoutingRule(
  db: Db,
  principal: Principal,
  targetText: string,
): Promise<{ target: string; removed: true }> {
  const target = parseTarget(targetText, "target");
  const { count } = await db.routingRule.deleteMany({
    where: { orgDid: principal.orgDid, task: target.task, complexity: target.complexity },
  });
  if (count === 0) throw NotFound("routing rule", targetText);
  forgetRoutingCatalogue(principal.orgDid);
  return { target: targetText, removed: true };
}
