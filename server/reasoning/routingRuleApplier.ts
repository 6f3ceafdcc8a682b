import { z } from "zod";
import type { Db } from "../db/client";
import { ValidationFailed } from "../errors";
import type { LearningApplier, LearningState } from "../learning/appliers";
import { catalogue } from "./catalogue";
import { forgetRoutingCatalogue } from "./routingCatalogue";
import { assertKnownModel, parseTarget, writeRule } from "./routingRules";

/**
 * The learning applier of kind `routing_rule` (server/learning/appliers.ts): target `<task>` or
 * `<task>:<complexity>`, state `{model: string | null}` (null: no rule). Apply sets the proposed
 * rule, rollback restores the previous state exactly (a rule, or none), each in the caller's
 * transaction; the row remembers who set it and through which proposal.
 */
const State = z.object({ model: z.string().min(1).max(300).nullable() }).strict();

function stateOf(state: LearningState, pointer: string): string | null {
  const parsed = State.safeParse(state);
  if (!parsed.success)
    throw ValidationFailed(
      parsed.error.issues.map((i) => ({
        field: `${pointer}${i.path.length ? `/${i.path.join("/")}` : ""}`,
        code: i.code === "unrecognized_keys" ? "UNKNOWN_FIELD" : "INVALID_VALUE",
        message: `${i.message}: a routing rule's state is {"model": "<model_id or provider/model_id>"} or {"model": null}.`,
      })),
    );
  return parsed.data.model;
}

export const routingRuleApplier: LearningApplier = {
  kind: "routing_rule",
  async validate(db: Db, orgDid: string, target: string, proposed: LearningState) {
    parseTarget(target);
    const model = stateOf(proposed, "/proposed");
    if (model !== null) assertKnownModel(await catalogue(db, orgDid), model, "/proposed/model");
  },
  async current(db: Db, orgDid: string, target: string) {
    const t = parseTarget(target);
    const row = await db.routingRule.findUnique({
      where: { orgDid_task_complexity: { orgDid, task: t.task, complexity: t.complexity } },
    });
    return { model: row?.model ?? null };
  },
  async apply(db, orgDid, target, state, by) {
    const t = parseTarget(target);
    const model = stateOf(state, by.action === "apply" ? "/proposed" : "/previous");
    await writeRule(db, orgDid, t, model, { actorDid: by.actorDid, proposalId: by.proposalId });
    forgetRoutingCatalogue(orgDid);
  },
};
