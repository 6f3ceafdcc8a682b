import { z } from "zod";
import { liveView } from "../trpc/live";
import { APPROVALS_CHANNEL } from "./approvalChanged";
import { countPendingApprovals, listApprovals } from "./listApprovals";
import * as s from "./schemas";

/** The inbox's page (a status, `mine`, filters) with the caller's pending count, live. */
export const inboxLive = liveView({
  summary: "The approval inbox's page and pending count, live",
  channel: APPROVALS_CHANNEL,
  capability: "svc_api:approvals:read",
  resourceType: "approval",
  input: s.ApprovalListQuery.omit({ mine: true }).extend({ mine: z.boolean().optional() }),
  async load(ctx) {
    const { mine, ...query } = ctx.input;
    const [page, count] = await Promise.all([
      listApprovals(ctx.db, ctx.principal, { ...query, mine }, ctx.secret),
      countPendingApprovals(ctx.db, ctx.principal),
    ]);
    return { ...page, pending_count: count.pending };
  },
});

/** The navigation's badge: how many open requests the signed-in person may decide, live. */
export const pendingCountLive = liveView({
  summary: "How many open approval requests you may decide, live",
  channel: APPROVALS_CHANNEL,
  capability: "svc_api:approvals:read",
  resourceType: "approval",
  input: z.undefined(),
  load: (ctx) => countPendingApprovals(ctx.db, ctx.principal),
});
