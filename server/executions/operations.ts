import { defineOperation } from "../http/operation";
import { callbackSecret, rotateCallbackSecret } from "./callbackSecret";
import { cancelExecution, getExecution, listCallbackAttempts, listExecutionLogs, listExecutions } from "./executions";
import * as s from "./schemas";

const tag = "Executions";

export const listExecutionsOp = defineOperation({
  id: "listExecutions",
  method: "GET",
  path: "/v1/executions",
  tag,
  summary: "List executions",
  description: "Newest first, filtered by status and agent_id.",
  capability: "svc_api:executions:read",
  resourceType: "execution",
  query: s.ExecutionListQuery,
  response: s.ExecutionList,
  successStatus: 200,
  handler: (ctx) => listExecutions(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const callbackSecretOp = defineOperation({
  id: "getCallbackSecret",
  method: "GET",
  path: "/v1/executions/callback-secret",
  tag,
  summary: "The organization's callback signing secret",
  description:
    "Verify callbacks with it (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature); created on first use.",
  capability: "svc_api:executions:write",
  resourceType: "signing_secret",
  response: s.CallbackSecret,
  secretFields: ["secret"],
  successStatus: 200,
  // A GET reads outside the gate's write transaction; creating the secret on first use needs one.
  handler: (ctx) => ctx.database.writeTx((tx) => callbackSecret(tx, ctx.principal)),
});

export const rotateCallbackSecretOp = defineOperation({
  id: "rotateCallbackSecret",
  method: "POST",
  path: "/v1/executions/callback-secret/rotate",
  tag,
  summary: "Replace the callback signing secret",
  description:
    "The new secret signs from now on; the previous one keeps signing beside it for 24 hours (`webhook-signature` then carries both).",
  capability: "svc_api:executions:write",
  resourceType: "signing_secret",
  response: s.RotatedCallbackSecret,
  secretFields: ["secret"],
  successStatus: 200,
  handler: (ctx) => rotateCallbackSecret(ctx.db, ctx.principal),
});

export const getExecutionOp = defineOperation({
  id: "getExecution",
  method: "GET",
  path: "/v1/executions/{id}",
  tag,
  summary: "Get an execution",
  capability: "svc_api:executions:read",
  resourceType: "execution",
  params: s.ExecutionIdParams,
  response: s.AsyncExecution,
  successStatus: 200,
  handler: (ctx) => getExecution(ctx.db, ctx.principal, ctx.params.id),
});

export const cancelExecutionOp = defineOperation({
  id: "cancelExecution",
  method: "POST",
  path: "/v1/executions/{id}/cancel",
  tag,
  summary: "Cancel a queued or running execution",
  description:
    "queued or processing → cancelled; a running sandbox stops within a second. An execution that has ended is 409 naming both states.",
  capability: "svc_api:executions:write",
  resourceType: "execution",
  params: s.ExecutionIdParams,
  response: s.AsyncExecution,
  successStatus: 200,
  problems: ["illegal_state_transition"],
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    return cancelExecution(ctx.db, ctx.principal, ctx.params.id);
  },
});

export const callbackAttemptsOp = defineOperation({
  id: "listCallbackAttempts",
  method: "GET",
  path: "/v1/executions/{id}/callback-attempts",
  tag,
  summary: "The callback's delivery attempts",
  capability: "svc_api:executions:read",
  resourceType: "execution",
  params: s.ExecutionIdParams,
  response: s.CallbackAttemptList,
  successStatus: 200,
  handler: (ctx) => listCallbackAttempts(ctx.db, ctx.principal, ctx.params.id),
});

export const executionLogsOp = defineOperation({
  id: "listExecutionLogs",
  method: "GET",
  path: "/v1/executions/{id}/logs",
  tag,
  summary: "The lines the run logged (ctx.log, console.*; at most 200)",
  capability: "svc_api:executions:read",
  resourceType: "execution",
  params: s.ExecutionIdParams,
  response: s.ExecutionLogList,
  successStatus: 200,
  handler: (ctx) => listExecutionLogs(ctx.db, ctx.principal, ctx.params.id),
});

export const executionOperations = [
  listExecutionsOp,
  callbackSecretOp,
  rotateCallbackSecretOp,
  getExecutionOp,
  cancelExecutionOp,
  callbackAttemptsOp,
  executionLogsOp,
];
