import { mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import * as op from "./operations";

/** The console's agent procedures, built from the /v1 operations. */
export const agentsRouter = router({
  list: queryFrom(op.listAgentsOp),
  status: queryFrom(op.agentStatusOp),
  deploy: mutationFrom(op.deployAgentOp),
  activate: mutationFrom(op.activateAgentOp),
  deactivate: mutationFrom(op.deactivateAgentOp),
  invoke: mutationFrom(op.invokeAgentOp),
  usage: queryFrom(op.getAgentUsageOp),
});
