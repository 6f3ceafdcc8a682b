import { router } from "../trpc/init";
import { mutationFrom, queryFrom } from "../trpc/procedures";
import { inboxLive, pendingCountLive } from "./liveViews";
import * as op from "./operations";

/** The console's approval procedures, built from the /v1 operations, and the inbox's live views. */
export const approvalsRouter = router({
  list: queryFrom(op.listApprovalsOp),
  get: queryFrom(op.getApprovalOp),
  create: mutationFrom(op.createApprovalOp),
  respond: mutationFrom(op.respondApprovalOp),
  cancel: mutationFrom(op.cancelApprovalOp),
  inbox: inboxLive,
  pendingCount: pendingCountLive,
});
