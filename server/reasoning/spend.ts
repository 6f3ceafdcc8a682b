import type { z } from "zod";
import type { Db } from "../db/client";
import type { Principal } from "../governance/principal";
import { budgetStates, round } from "./budgets";
import type { DelegationSpend, EntitySpend } from "./schemas";

/**
 * Spend views for the console: what reasoning calls cost, per delegation and per entity
 * (`entity_id`), since a date (default 30 days). Settled costs come from the recorded calls;
 * `reserved_usd` is the worst case of calls still running. A delegation with a budget shows it
 * and what its current period leaves (counted from its charges, so calls of derived delegations too).
 */
const DEFAULT_DAYS = 30;

const sinceOf = (since?: string) => (since ? new Date(since) : new Date(Date.now() - DEFAULT_DAYS * 86_400_000));

export async function spendByDelegation(
  db: Db,
  principal: Principal,
  since?: string,
): Promise<{ data: z.input<typeof DelegationSpend>[] }> {
  const where = { orgDid: principal.orgDid, createdAt: { gte: sinceOf(since) } };
  const [settled, pending] = await Promise.all([
    db.reasoningCall.groupBy({ by: ["delegationId"], where, _sum: { costUsd: true }, _count: { _all: true } }),
    db.reasoningCall.groupBy({
      by: ["delegationId"],
      where: { ...where, status: "pending" },
      _sum: { reservedUsd: true },
    }),
  ]);
  const ids = settled.map((g) => g.delegationId).filter((d): d is string => d !== null);
  const [delegations, budgets] = await Promise.all([
    db.delegation.findMany({ where: { id: { in: ids }, orgDid: principal.orgDid }, select: { id: true, name: true } }),
    budgetStates(db, ids),
  ]);
  const nameOf = new Map(delegations.map((d) => [d.id, d.name]));
  const budgetOf = new Map(budgets.map((b) => [b.delegationId, b]));
  return {
    data: settled
      .filter((g) => g.delegationId !== null)
      .map((g) => {
        const b = budgetOf.get(g.delegationId!);
        return {
          delegation_id: g.delegationId!,
          name: nameOf.get(g.delegationId!) ?? null,
          spent_usd: round(g._sum.costUsd ?? 0),
          reserved_usd: round(pending.find((p) => p.delegationId === g.delegationId)?._sum.reservedUsd ?? 0),
          calls: g._count._all,
          budget: b ? { limit_usd: b.limitUsd, period: b.period } : null,
          remaining_usd: b ? round(b.remainingUsd) : null,
          budget_spent_usd: b ? round(b.spentUsd) : null,
          budget_reserved_usd: b ? round(b.reservedUsd) : null,
        };
      })
      .sort((a, b) => b.spent_usd - a.spent_usd),
  };
}

export async function spendByEntity(
  db: Db,
  principal: Principal,
  since?: string,
): Promise<{ data: z.input<typeof EntitySpend>[] }> {
  const where = { orgDid: principal.orgDid, createdAt: { gte: sinceOf(since) } };
  const [settled, pending] = await Promise.all([
    db.reasoningCall.groupBy({ by: ["entityId"], where, _sum: { costUsd: true }, _count: { _all: true } }),
    db.reasoningCall.groupBy({ by: ["entityId"], where: { ...where, status: "pending" }, _sum: { reservedUsd: true } }),
  ]);
  return {
    data: settled
      .map((g) => ({
        entity_id: g.entityId,
        spent_usd: round(g._sum.costUsd ?? 0),
        reserved_usd: round(pending.find((p) => p.entityId === g.entityId)?._sum.reservedUsd ?? 0),
        calls: g._count._all,
      }))
      .sort((a, b) => b.spent_usd - a.spent_usd),
  };
}
