import type { z } from "zod";
import type { Db } from "../db/client";
import type { ApprovalRequest as Row, Prisma } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { keyset } from "../http/cursor";
import { notOwnRequestWhere } from "./decidingAuthority";
import type { ApprovalListQuery } from "./schemas";
import { publicApprovalView } from "./views";

/**
 * Requests of the caller's organization. An open-state filter (`status=pending` or `delegated`:
 * the inbox) orders riskiest first, then newest; every other list is newest first. Both orders
 * are served by an index and keyset cursors, so the first page costs the same at 10,000 pending.
 * `mine=true` keeps only what the caller may decide: not their own requests (`notOwnRequestWhere`:
 * a console key's requests are its minting member's), and only those assigned to anyone, to them,
 * or to their console role.
 */
export async function listApprovals(
  db: Db,
  principal: Principal,
  query: z.output<typeof ApprovalListQuery>,
  secret: Buffer,
) {
  const byRisk = query.status === "pending" || query.status === "delegated";
  const { after, take, page } = keyset<Row>(secret, byRisk ? "approvals-inbox" : "approvals", query, (last) =>
    byRisk ? [last.riskRank, last.createdAt.toISOString(), last.id] : [last.createdAt.toISOString(), last.id],
  );
  const where: Prisma.ApprovalRequestWhereInput[] = [{ orgDid: principal.orgDid }];
  if (query.status) where.push({ status: query.status });
  if (query.risk_level) where.push({ riskLevel: query.risk_level });
  if (query.agent_id) where.push({ agentId: query.agent_id });
  if (query.task_id) where.push({ taskId: query.task_id });
  if (query.mine) {
    where.push(...notOwnRequestWhere(principal));
    where.push({ OR: [{ approverDids: null }, { approverDids: { contains: `|${principal.actorDid}|` } }] });
    if (principal.role && principal.role !== "admin")
      where.push({ OR: [{ approverRole: null }, { approverRole: principal.role }] });
  }
  if (after && byRisk) {
    const [rank, at, id] = [after[0] as number, new Date(after[1] as string), after[2] as string];
    where.push({
      OR: [
        { riskRank: { lt: rank } },
        { riskRank: rank, createdAt: { lt: at } },
        { riskRank: rank, createdAt: at, id: { lt: id } },
      ],
    });
  } else if (after) {
    const [at, id] = [new Date(after[0] as string), after[1] as string];
    where.push({ OR: [{ createdAt: { lt: at } }, { createdAt: at, id: { lt: id } }] });
  }
  const rows = await db.approvalRequest.findMany({
    where: { AND: where },
    orderBy: byRisk
      ? [{ riskRank: "desc" }, { createdAt: "desc" }, { id: "desc" }]
      : [{ createdAt: "desc" }, { id: "desc" }],
    take,
  });
  const { items, pagination } = page(rows);
  return { data: items.map(publicApprovalView), pagination };
}

/** How many open requests the caller may decide (the navigation's badge). */
export async function countPendingApprovals(db: Db, principal: Principal): Promise<{ pending: number }> {
  const pending = await db.approvalRequest.count({
    where: {
      orgDid: principal.orgDid,
      status: { in: ["pending", "delegated"] },
      AND: [
        ...notOwnRequestWhere(principal),
        { OR: [{ approverDids: null }, { approverDids: { contains: `|${principal.actorDid}|` } }] },
      ],
    },
  });
  return { pending };
}
