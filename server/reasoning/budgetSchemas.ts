import { z } from "zod";
import { DelegationBudget } from "../identity/budgetSchemas";

// Pure zod: budgets (inside delegations) and spend.

// The budget's shape is identity's (it is issued with a delegation): server/identity/budgetSchemas.ts.
export const Spend = z.object({
  spent_usd: z.number().describe("Settled cost of recorded calls in the period"),
  reserved_usd: z.number().describe("Worst cases reserved by calls still running"),
  calls: z.number().int(),
});

export const DelegationSpend = Spend.extend({
  delegation_id: z.string(),
  name: z.string().nullable(),
  budget: DelegationBudget.nullable(),
  remaining_usd: z.number().nullable().describe("What the budget leaves in its current period; null without one"),
  budget_spent_usd: z
    .number()
    .nullable()
    .describe(
      "What the budget's current period has settled (its own calls and its derived delegations'); null without one",
    ),
  budget_reserved_usd: z
    .number()
    .nullable()
    .describe("Worst cases reserved against the budget by calls still running; null without one"),
});

export const EntitySpend = Spend.extend({ entity_id: z.string().nullable() });

export const DelegationSpendList = z.object({ data: z.array(DelegationSpend) });

export const EntitySpendList = z.object({ data: z.array(EntitySpend) });

export const SpendQuery = z.object({
  since: z.string().datetime({ offset: true }).optional().describe("From (default: 30 days ago)"),
});
