import type { Db } from "../db/client";
import { NotFound } from "../errors";
import type { Principal } from "../governance/principal";
import { forgetDiscoveredModels } from "./discoverModels";
import { forgetRoutingCatalogue } from "./routingCatalogue";

/**
 * Removes one of the organization's console providers. Its recorded calls stay (they name the
 * provider); providers of SVC_MODEL_PROVIDERS are removed from the environment, not here.
 */
export async function removeProvider(db: Db, principal: Principal, id: string): Promise<{ id: string; removed: true }> {
  const { count } = await db.reasoningProvider.deleteMany({ where: { id, orgDid: principal.orgDid } });
  if (count === 0) throw NotFound("model provider", id);
  forgetDiscoveredModels();
  forgetRoutingCatalogue(principal.orgDid);
  return { id, removed: true };
}
