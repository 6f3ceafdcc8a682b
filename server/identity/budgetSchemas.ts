import { z } from "zod";

// Pure zod: a delegation's reasoning budget. Issued here, with the delegation; enforced by
// reasoning (server/reasoning/budgets.ts, through the issuance hook), so the kernel imports no area.

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
