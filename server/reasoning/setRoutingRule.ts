import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { catalogue } from "./catalogue";
import { forgetRoutingCatalogue } from "./routingCatalogue";
import { assertKnownModel, parseTarget, writeRule } from "./routingRules";
import type { RoutingRuleSetRequest } from "./schemas";

/**
 * Sets the organization's routing rule for a target (an administrator, in the console): the
 * model must be in the catalogue now (400 with errors[] at /model otherwise); an unknown task or
 * complexity is 404.
 */
export async function setRoutingRule(
  db: Db,
  principal: Principal,
  input: z.output<typeof RoutingRuleSetRequest>,
): Promise<{ target: string; model: string }> {
  const target = parseTarget(input.target, "target");
  assertKnownModel(await catalogue(db, principal.orgDid), input.model, "model");
  await writeRule(db, principal.orgDid, target, input.model, { actorDid: principal.actorDid });
  forgetRoutingCatalogue(principal.orgDid);
  return { target: input.target, model: input.model };
}
