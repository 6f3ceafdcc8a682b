import type { z } from "zod";
import type { Db } from "../db/client";
import { domainError, ValidationFailed } from "../errors";
import type { CatalogueModel } from "./catalogue";
import { ReasoningComplexity, ReasoningTask } from "./schemas";

type Task = z.output<typeof ReasoningTask>;
type Complexity = z.output<typeof ReasoningComplexity>;

/**
 * Routing rules: per organization, "for this task (and complexity) prefer this model". A rule's
 * target is `<task>` (every complexity without a rule of its own, stored with complexity `*`) or
 * `<task>:<complexity>`; its model a catalogue model_id or `<provider>/<model_id>`. The router
 * (route.ts) puts the rule's model first when it is active, holds the call and fits the budget,
 * and says so in the routing reason; otherwise it routes as if there were no rule, and says why
 * the rule was passed over. Set by an administrator (console) or an applied learning proposal
 * (routingRuleApplier.ts).
 */
export const ANY_COMPLEXITY = "*";

export interface RoutingRuleTarget {
  task: Task;
  /** `*` for every complexity. */
  complexity: Complexity | typeof ANY_COMPLEXITY;
}

export interface Rule {
  target: string;
  task: Task;
  complexity: Complexity | typeof ANY_COMPLEXITY;
  model: string;
  setBy: string | null;
  proposalId: string | null;
  updatedAt: Date;
}

export const targetOf = (task: string, complexity: string) =>
  complexity === ANY_COMPLEXITY ? task : `${task}:${complexity}`;

/**
 * Parses a target. A malformed one (not `<word>` or `<word>:<word>`) is 400 with errors[]
 * pointing at `pointer`; a well-formed one naming a task or complexity that does not exist is
 * 404 (the target is unknown).
 */
export function parseTarget(target: string, pointer = "/target"): RoutingRuleTarget {
  if (typeof target !== "string" || !/^[a-z_]{1,40}(:[a-z_]{1,40})?$/.test(target))
    throw ValidationFailed([
      {
        field: pointer,
        code: "INVALID_TARGET",
        message: "A routing rule's target is `<task>` or `<task>:<complexity>`, e.g. `coding` or `coding:simple`.",
        received: String(target).slice(0, 200),
      },
    ]);
  const [task, complexity] = target.split(":");
  const t = ReasoningTask.safeParse(task);
  const c =
    complexity === undefined
      ? { success: true as const, data: ANY_COMPLEXITY as RoutingRuleTarget["complexity"] }
      : ReasoningComplexity.safeParse(complexity);
  if (!t.success || !c.success)
    throw domainError(
      "not_found",
      `No routing target ${JSON.stringify(target)}: tasks are ${ReasoningTask.options.join(", ")}; complexities ${ReasoningComplexity.options.join(", ")}.`,
    );
  return { task: t.data, complexity: c.data };
}

/** The catalogue model a rule's `model` names (a `<provider>/<model_id>` key first, then a model_id). */
export function ruleModel(models: readonly CatalogueModel[], model: string): CatalogueModel | undefined {
  return models.find((m) => m.key === model) ?? models.find((m) => m.modelId === model);
}

/** Checks that `model` is in the organization's catalogue (400 with errors[] at `pointer` when not). */
export function assertKnownModel(models: readonly CatalogueModel[], model: string, pointer: string): void {
  if (!ruleModel(models, model))
    throw ValidationFailed([
      {
        field: pointer,
        code: "UNKNOWN_MODEL",
        message: `No model ${JSON.stringify(model.slice(0, 200))} in your organization's catalogue (GET /v1/reasoning/models).`,
        received: model.slice(0, 200),
      },
    ]);
}

/** The organization's rules, by target. */
export async function loadRules(db: Db, orgDid: string): Promise<Rule[]> {
  const rows = await db.routingRule.findMany({ where: { orgDid }, orderBy: [{ task: "asc" }, { complexity: "asc" }] });
  return rows.map((r) => ({
    target: targetOf(r.task, r.complexity),
    task: r.task as Task,
    complexity: r.complexity as Rule["complexity"],
    model: r.model,
    setBy: r.setBy,
    proposalId: r.proposalId,
    updatedAt: r.updatedAt,
  }));
}

/** The rule a call for `task` at `complexity` follows: its own complexity's, else the task's. */
export function ruleFor(rules: readonly Rule[], task: Task, complexity: Complexity): Rule | undefined {
  return (
    rules.find((r) => r.task === task && r.complexity === complexity) ??
    rules.find((r) => r.task === task && r.complexity === ANY_COMPLEXITY)
  );
}

/** Sets (`model` a string) or removes (`null`) the rule of `target`, in the caller's transaction. */
export async function writeRule(
  db: Db,
  orgDid: string,
  target: RoutingRuleTarget,
  model: string | null,
  by: { actorDid: string | null; proposalId?: string | null },
): Promise<void> {
  const key = { orgDid_task_complexity: { orgDid, task: target.task, complexity: target.complexity } };
  if (model === null) {
    await db.routingRule.deleteMany({ where: { orgDid, task: target.task, complexity: target.complexity } });
    return;
  }
  const data = { model, setBy: by.actorDid, proposalId: by.proposalId ?? null };
  await db.routingRule.upsert({ where: key, create: { orgDid, ...target, ...data }, update: data });
}
