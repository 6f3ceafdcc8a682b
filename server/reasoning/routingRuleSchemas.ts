import { z } from "zod";
import { ModelStatus } from "./modelSchemas";
import { ReasoningComplexity, ReasoningTask, Timestamp } from "./thinkSchemas";

// Pure zod: routing rules (console).

const RuleTarget = z.string().min(1).max(100).describe("`<task>` or `<task>:<complexity>`");

export const RoutingRuleView = z.object({
  target: z.string().describe("`<task>` (every complexity without a rule of its own) or `<task>:<complexity>`"),
  task: ReasoningTask,
  complexity: ReasoningComplexity.nullable().describe("null: every complexity"),
  model: z.string().describe("A model_id or `<provider>/<model_id>`"),
  model_status: ModelStatus.nullable().describe("The model's status in the catalogue now; null when it is not there"),
  set_by: z.string().nullable(),
  proposal_id: z.string().nullable().describe("The learning proposal that set it, when one did"),
  updated_at: Timestamp,
});

export const RoutingRuleList = z.object({ data: z.array(RoutingRuleView) });

export const RoutingRuleSetRequest = z.object({ target: RuleTarget, model: z.string().min(1).max(300) }).strict();

export const RoutingRuleSet = z.object({ target: z.string(), model: z.string() });

export const RoutingRuleTargetInput = z.object({ target: RuleTarget }).strict();

export const RoutingRuleRemoved = z.object({ target: z.string(), removed: z.literal(true) });
