import type { Database, Db } from "../db/client";
import { forEngine, sqliteTimestamp } from "../db/raw";
import type { Principal } from "../governance/principal";
import { WORKER_GONE_AFTER_MS, workerLastSeen } from "../jobs/workerSeen";

/**
 * The overview's figures, each one aggregation in SQL over the caller's organization (both
 * engines): calls per hour, executions by status, webhook health, and what needs attention.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const at = (engine: Database["engine"], d: Date) => (engine === "sqlite" ? sqliteTimestamp(d) : d);

/**
 * The console's own page reads (allowed tRPC reads), as the provenance explorer hides them: the
 * chart counts what callers did, not the console looking at it.
 */
const NOT_CONSOLE_READ = `NOT ("operation" LIKE 'TRPC %' AND "decision" = 'allowed' AND ("capability" IS NULL OR "capability" LIKE '%:read'))`;

/** Calls per hour over the last `hours` (oldest first, every hour present), allowed vs refused. */
export async function callsPerHour(
  db: Db,
  engine: Database["engine"],
  principal: Principal,
  hours = 24,
  now = new Date(),
) {
  const end = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  const since = new Date(end - hours * HOUR_MS);
  const hour =
    engine === "postgresql"
      ? `to_char(date_trunc('hour', "timestamp"), 'YYYY-MM-DD"T"HH24')`
      : `substr("timestamp", 1, 13)`;
  const rows = await db.$queryRawUnsafe<Array<{ hour: string; decision: string; n: number | bigint }>>(
    ...forEngine(
      engine,
      `SELECT ${hour} AS "hour", "decision", COUNT(*) AS "n" FROM "provenance_record"
       WHERE "org_did" = $1 AND "timestamp" >= $2 AND ${NOT_CONSOLE_READ}
       GROUP BY 1, 2`,
      [principal.orgDid, at(engine, since)],
    ),
  );
  const buckets = new Map<string, { hour: string; allowed: number; refused: number }>();
  for (let t = since.getTime(); t < end; t += HOUR_MS) {
    const key = new Date(t).toISOString().slice(0, 13);
    buckets.set(key, { hour: `${key}:00:00Z`, allowed: 0, refused: 0 });
  }
  for (const r of rows) {
    const b = buckets.get(r.hour);
    if (b) b[r.decision === "allowed" ? "allowed" : "refused"] += Number(r.n);
  }
  return [...buckets.values()];
}

/** Executions queued in the last `days`, by status, and the share of those that ended which completed. */
export async function executionStats(db: Db, principal: Principal, days = 7, now = new Date()) {
  const groups = await db.asyncExecution.groupBy({
    by: ["status"],
    where: { orgDid: principal.orgDid, queuedAt: { gte: new Date(now.getTime() - days * DAY_MS) } },
    _count: { _all: true },
  });
  const byStatus = { queued: 0, processing: 0, completed: 0, failed: 0, cancelled: 0 } as Record<string, number>;
  for (const g of groups) byStatus[g.status] = g._count._all;
  const ended = (byStatus.completed ?? 0) + (byStatus.failed ?? 0);
  return { days, by_status: byStatus, success_rate: ended === 0 ? null : (byStatus.completed ?? 0) / ended };
}

/** The organization's webhooks by state, and their deliveries of the last 24 hours. */
export async function webhookHealth(db: Db, principal: Principal, now = new Date()) {
  const [states, failing, deliveries] = await Promise.all([
    db.subscription.groupBy({
      by: ["status"],
      where: { orgDid: principal.orgDid, kind: "webhook" },
      _count: { _all: true },
    }),
    db.subscription.count({
      where: { orgDid: principal.orgDid, kind: "webhook", status: "active", failingSince: { not: null } },
    }),
    db.webhookDelivery.groupBy({
      by: ["success"],
      where: { orgDid: principal.orgDid, createdAt: { gte: new Date(now.getTime() - DAY_MS) } },
      _count: { _all: true },
    }),
  ]);
  const count = (status: string) => states.find((s) => s.status === status)?._count._all ?? 0;
  return {
    active: count("active") - failing,
    failing,
    disabled: count("disabled"),
    deliveries_24h: {
      succeeded: deliveries.find((d) => d.success)?._count._all ?? 0,
      failed: deliveries.find((d) => !d.success)?._count._all ?? 0,
    },
  };
}

/** A target's origin and path: a query string may carry the receiver's token. */
const originAndPath = (url: string) => {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return url.split("?")[0]!;
  }
};

/** Who waits for an approval request, from its waiter: a paused run's execution, or a workflow's node. */
const EXECUTION_WAITER = "execution";
const WORKFLOW_NODE_WAITER = "workflow_node";

/**
 * Open approval requests, oldest first (the longest wait is the most urgent), and the workflows
 * blocked on one (a node waiting for its approval), longest blocked first: five of each. A request
 * says what it blocks: the paused execution or the workflow.
 */
export async function pendingApprovals(db: Db, principal: Principal) {
  const open = { orgDid: principal.orgDid, status: { in: ["pending", "delegated"] } };
  const select = {
    id: true,
    actionDescription: true,
    riskLevel: true,
    createdAt: true,
    taskId: true,
    waiterKind: true,
  };
  // Through the requests (indexed by organization and status), not a scan of every workflow node:
  // a node that waits has an open request whose task is the node.
  const [requests, workflowRequests] = await Promise.all([
    db.approvalRequest.findMany({ where: open, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: 5, select }),
    db.approvalRequest.findMany({
      where: { ...open, waiterKind: WORKFLOW_NODE_WAITER },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: 5,
      select,
    }),
  ]);
  const nodeIds = [...requests, ...workflowRequests]
    .filter((r) => r.waiterKind === WORKFLOW_NODE_WAITER)
    .map((r) => r.taskId);
  const nodes = nodeIds.length
    ? await db.workflowNode.findMany({
        where: { id: { in: nodeIds }, orgDid: principal.orgDid },
        select: { id: true, key: true, status: true, workflow: { select: { id: true, name: true } } },
      })
    : [];
  const nodeOf = new Map(nodes.map((n) => [n.id, n]));
  return {
    pending_approvals: requests.map((r) => {
      const workflow = r.waiterKind === WORKFLOW_NODE_WAITER ? nodeOf.get(r.taskId)?.workflow : undefined;
      return {
        id: r.id,
        action_description: r.actionDescription,
        risk_level: r.riskLevel,
        created_at: r.createdAt.toISOString(),
        blocks: workflow
          ? { kind: "workflow" as const, id: workflow.id, name: workflow.name }
          : r.waiterKind === EXECUTION_WAITER
            ? { kind: "execution" as const, id: r.taskId, name: null }
            : null,
      };
    }),
    blocked_workflows: workflowRequests.flatMap((r) => {
      const node = nodeOf.get(r.taskId);
      return node && node.status === "waiting_approval"
        ? [
            {
              id: node.workflow.id,
              name: node.workflow.name,
              node: node.key,
              approval_id: r.id,
              since: r.createdAt.toISOString(),
            },
          ]
        : [];
    }),
  };
}

/** Failed executions of the last week, disabled webhooks, API keys expiring within a week: five of each, newest first. */
export async function needsAttention(db: Db, principal: Principal, now = new Date()) {
  const [failed, disabled, expiring] = await Promise.all([
    db.asyncExecution.findMany({
      where: { orgDid: principal.orgDid, status: "failed", completedAt: { gte: new Date(now.getTime() - 7 * DAY_MS) } },
      orderBy: { completedAt: "desc" },
      take: 5,
      select: { id: true, completedAt: true, errorJson: true, agent: { select: { id: true, name: true } } },
    }),
    db.subscription.findMany({
      where: { orgDid: principal.orgDid, kind: "webhook", status: "disabled" },
      orderBy: { updatedAt: "desc" },
      take: 5,
      select: { id: true, targetUrl: true, disabledReason: true },
    }),
    db.delegation.findMany({
      where: {
        orgDid: principal.orgDid,
        kind: "api_key",
        revokedAt: null,
        expiresAt: { gt: now, lte: new Date(now.getTime() + 7 * DAY_MS) },
      },
      orderBy: { expiresAt: "asc" },
      take: 5,
      select: { id: true, name: true, expiresAt: true },
    }),
  ]);
  return {
    failed_executions: failed.map((e) => ({
      id: e.id,
      agent_id: e.agent.id,
      agent_name: e.agent.name,
      completed_at: e.completedAt?.toISOString() ?? null,
      error_code: (e.errorJson as { code?: unknown } | null)?.code?.toString() ?? null,
    })),
    disabled_webhooks: disabled.map((w) => ({
      id: w.id,
      target: originAndPath(w.targetUrl),
      reason: w.disabledReason,
    })),
    expiring_keys: expiring.map((k) => ({ id: k.id, name: k.name, expires_at: k.expiresAt.toISOString() })),
  };
}

/**
 * Work of the organization that nobody is running: jobs due now (executions, webhook deliveries,
 * workflow steps) while no claim loop of any process has been seen for WORKER_GONE_AFTER_MS, which
 * is how a web process started with SVC_IN_PROCESS_WORKER=0 and no `npm run worker` looks from
 * outside (/readyz answers for the web process only). Null when there is no such work, or a worker
 * is alive: due jobs with a live worker are simply about to run.
 */
export async function stalledQueue(db: Db, principal: Principal, now = new Date()) {
  const [dueJobs, queuedExecutions, seenAt] = await Promise.all([
    db.job.count({ where: { orgDid: principal.orgDid, state: "queued", availableAt: { lte: now } } }),
    db.asyncExecution.count({ where: { orgDid: principal.orgDid, status: "queued" } }),
    workerLastSeen(db),
  ]);
  if (dueJobs === 0) return null;
  if (seenAt && now.getTime() - seenAt.getTime() < WORKER_GONE_AFTER_MS) return null;
  return {
    due_jobs: dueJobs,
    queued_executions: queuedExecutions,
    worker_last_seen_at: seenAt?.toISOString() ?? null,
  };
}
