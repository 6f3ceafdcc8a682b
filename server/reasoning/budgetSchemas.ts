import { z } from "zod";

// Pure zod: budgets (inside delegations) and spend.

export const BudgetPeriod = z.enum(["total", "day", "month"]);

export const DelegationBudget = z
  .object({
    limit_usd: z
      .number()
      .min(0.000001)
      .max(1_000_000)
      .describe("The most reasoning calls under this delegation may cost, USD: more than 0 (at least 0.000001)"),
    period: BudgetPeriod.describe("total: over the delegation's life; day / month: per UTC day / calendar month"),
  })
  .strict()
  .describe("A spending limit for reasoning calls; a derived delegation's budget can only narrow its grantor's")
  .meta({ id: "DelegationBudget", example: { limit_usd: 5, period: "day" } });

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
