import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { catalogue } from "./catalogue";
import { loadRules, ruleModel } from "./routingRules";
import type { RoutingRuleList } from "./schemas";

/** The organization's routing rules, each with whether its model is in the catalogue and active now. */
export async function listRoutingRules(db: Db, principal: Principal): Promise<z.input<typeof RoutingRuleList>> {
  const [rules, models] = await Promise.all([loadRules(db, principal.orgDid), catalogue(db, principal.orgDid)]);
  return {
    data: rules.map((r) => {
      const m = ruleModel(models, r.model);
      return {
        target: r.target,
        task: r.task,
        complexity: r.complexity === "*" ? null : r.complexity,
        model: r.model,
        model_status: m ? m.status : null,
        set_by: r.setBy,
        proposal_id: r.proposalId,
        updated_at: r.updatedAt.toISOString(),
      };
    }),
  };
}
