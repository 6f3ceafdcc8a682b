import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { catalogue } from "./catalogue";

/**
 * The one question benchmarks ask of the model catalogue: does the caller's organization's
 * catalogue know this model (by its `model_id`, or its `<provider>/<model_id>` key)? A benchmark
 * of a model svc cannot route to would chart a model nobody can pick, so its submission is 404.
 */
export async function catalogueHasModel(db: Db, principal: Principal, modelId: string): Promise<boolean> {
  const models = await catalogue(db, principal.orgDid);
  return models.some((m) => m.modelId === modelId || m.key === modelId);
}
