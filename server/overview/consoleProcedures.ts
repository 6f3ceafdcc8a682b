import { z } from "zod";
import { coveredBy } from "../identity/capabilities";
import { unusedHighRisk } from "../identity/unusedHighRisk";
import { ledgerSync } from "../ledger/proofs";
import { ROLES } from "../members/roles";
import { defineConsoleProcedure } from "../trpc/procedures";
import {
  callsPerHour,
  executionStats,
  needsAttention,
  pendingApprovals,
  stalledQueue,
  webhookHealth,
} from "./dashboard";

const count = z.number().int().nonnegative();

export const Dashboard = z.object({
  calls_per_hour: z
    .array(z.object({ hour: z.string().describe("The hour's start (UTC)."), allowed: count, refused: count }))
    .nullable()
    .describe("The last 24 hours; null without svc_api:provenance:read."),
  executions: z
    .object({
      days: z.number().int(),
      by_status: z.record(z.string(), count),
      success_rate: z
        .number()
        .min(0)
        .max(1)
        .nullable()
        .describe("completed / (completed + failed) of the executions queued in the window; null when none ended."),
    })
    .nullable(),
  webhooks: z
    .object({
      active: count,
      failing: count,
      disabled: count,
      deliveries_24h: z.object({ succeeded: count, failed: count }),
    })
    .nullable(),
  ledger: z
    .object({
      record_count: count,
      checkpoint_tree_size: count,
      records_behind: count,
      checkpoint_age_seconds: z.number().nullable(),
      status: z.enum(["in_sync", "behind"]),
    })
    .nullable(),
  attention: z.object({
    failed_executions: z.array(
      z.object({
        id: z.string(),
        agent_id: z.string(),
        agent_name: z.string(),
        completed_at: z.string().nullable(),
        error_code: z.string().nullable(),
      }),
    ),
    disabled_webhooks: z.array(z.object({ id: z.string(), target: z.string(), reason: z.string().nullable() })),
    expiring_keys: z.array(z.object({ id: z.string(), name: z.string().nullable(), expires_at: z.string() })),
    pending_approvals: z
      .array(
        z.object({
          id: z.string(),
          action_description: z.string(),
          risk_level: z.string(),
          created_at: z.string(),
          blocks: z
            .object({ kind: z.enum(["execution", "workflow"]), id: z.string(), name: z.string().nullable() })
            .nullable()
            .describe(
              "What waits for the decision: a paused execution or a workflow; null for a request nothing waits on.",
            ),
        }),
      )
      .describe("Open requests, oldest first (five); empty without svc_api:approvals:read."),
    blocked_workflows: z
      .array(
        z.object({
          id: z.string(),
          name: z.string().nullable(),
          node: z.string().describe("The node waiting for its approval"),
          approval_id: z.string().nullable(),
          since: z.string().nullable(),
        }),
      )
      .describe(
        "Workflows with a node waiting for an approval, longest blocked first (five); empty without svc_api:workflows:read.",
      ),
    stalled_queue: z
      .object({
        due_jobs: count.describe("The organization's jobs due now and not claimed (executions, deliveries, steps)"),
        queued_executions: count.describe("The organization's executions in status queued"),
        worker_last_seen_at: z
          .string()
          .nullable()
          .describe("When a worker of any process last polled the queue; null: never, on this database"),
      })
      .nullable()
      .describe(
        "Queued work while no worker has been seen for a minute (SVC_IN_PROCESS_WORKER=0 and no `npm run worker`); null when none or a worker is alive, and without svc_api:executions:read.",
      ),
    unused_high_risk: z
      .array(
        z.object({
          id: z.string().describe("The key's delegation id"),
          name: z.string().nullable(),
          kind: z.string(),
          unused: z
            .array(z.string())
            .describe(
              "Its high-risk capabilities (`:admin`, passports and delegations writes, or a wildcard covering one) unused in 30 days",
            ),
        }),
      )
      .describe(
        "Live keys and delegation tokens holding high-risk capabilities nothing used in the last 30 days, their derived delegations' calls included (five); empty without svc_api:delegations:read.",
      ),
  }),
});

/**
 * The overview's dashboard in one read (one record): each section only when the caller's
 * delegation covers what it reads, so a role without a capability sees no figure from it.
 */
export const dashboardProcedure = defineConsoleProcedure({
  summary:
    "The overview's dashboard: calls per hour, executions by status, webhook health, the ledger, what needs attention",
  roles: ROLES,
  capability: null,
  resourceType: null,
  response: Dashboard,
  async handler(ctx) {
    const can = (capability: string) => coveredBy(ctx.principal.capabilities, capability);
    const [calls, executions, webhooks, ledger, attention, approvals, stalled, unused] = await Promise.all([
      can("svc_api:provenance:read") ? callsPerHour(ctx.db, ctx.database.engine, ctx.principal) : null,
      can("svc_api:executions:read") ? executionStats(ctx.db, ctx.principal) : null,
      can("svc_api:events:read") ? webhookHealth(ctx.db, ctx.principal) : null,
      can("svc_api:provenance:read") ? ledgerSync(ctx.database) : null,
      needsAttention(ctx.db, ctx.principal),
      pendingApprovals(ctx.db, ctx.principal),
      can("svc_api:executions:read") ? stalledQueue(ctx.db, ctx.principal) : null,
      can("svc_api:delegations:read") ? unusedHighRisk(ctx.db, ctx.principal) : [],
    ]);
    const { failed_executions, disabled_webhooks, expiring_keys } = attention;
    return {
      calls_per_hour: calls,
      executions,
      webhooks,
      ledger,
      attention: {
        failed_executions: can("svc_api:executions:read") ? failed_executions : [],
        disabled_webhooks: can("svc_api:events:read") ? disabled_webhooks : [],
        expiring_keys: can("svc_api:delegations:read") ? expiring_keys : [],
        pending_approvals: can("svc_api:approvals:read") ? approvals.pending_approvals : [],
        blocked_workflows: can("svc_api:workflows:read") ? approvals.blocked_workflows : [],
        stalled_queue: stalled,
        unused_high_risk: unused,
      },
    };
  },
});
