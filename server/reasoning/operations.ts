import { defineOperation } from "../http/operation";
import { getCall, listCalls, recordFeedback } from "./calls";
import { benchmarkOperations } from "./benchmarkOperations";
import { listModels } from "./listModels";
import { modelPerformance } from "./modelPerformance";
import * as s from "./schemas";
import { admitThink } from "./thinkReasoning";

const tag = "Reasoning";
const read = "svc_api:models:read";

export const thinkOp = defineOperation({
  id: "think",
  method: "POST",
  path: "/v1/reasoning/think",
  tag,
  summary: "A routed model call",
  description:
    "pinned_model wins; otherwise the router scores the active models for task and complexity under budget (minimize, optimize, unlimited: see the README's routing formula) and answers why in metadata.routingDecision. On a provider error, timeout or rate limit it falls back to the next alternative, each attempt recorded (GET /v1/reasoning/calls/{id}). Usage and costUsd come from the provider's token counts × the price table. Under a delegation budget the call reserves its worst case at admission and settles to the real cost: 402 (type …budget-exceeded) when it does not fit. 503 with remediation when no provider is configured; 502 model_call_failed when every attempt failed. An Idempotency-Key replay answers what the first call answered: its text, or its 502 problem when every attempt failed.",
  capability: "svc_api:reasoning:think",
  resourceType: "reasoning_call",
  body: s.ReasoningThinkRequest,
  response: s.ReasoningThinkResponse,
  successStatus: 200,
  problems: ["budget_exceeded", "model_unpriced", "reasoning_unavailable", "model_call_failed"],
  async handler(ctx) {
    const admitted = await admitThink(ctx, ctx.body);
    ctx.setResource(admitted.callId);
    ctx.afterCommit(() => admitted.run(ctx.database));
    return admitted.answer;
  },
});

export const listModelsOp = defineOperation({
  id: "listModels",
  method: "GET",
  path: "/v1/reasoning/models",
  tag,
  summary: "The model catalogue",
  description:
    "Every model of the configured providers (SVC_MODEL_PROVIDERS and those your administrators added): capability scores and prices from the price table (or the provider's configuration, or your organization's edits), context length, features, status, and performance measured from your organization's recorded calls over 30 days.",
  capability: read,
  resourceType: "model",
  response: s.ModelListResponse,
  successStatus: 200,
  handler: (ctx) => listModels(ctx.db, ctx.principal),
});

export const modelPerformanceOp = defineOperation({
  id: "getModelPerformance",
  method: "GET",
  path: "/v1/reasoning/models/{id}/performance",
  tag,
  summary: "A model's measured performance",
  description:
    "From your organization's recorded attempts on the model over 30 days (a model_id, or `<provider>/<model_id>` URL-encoded): requests, success rate, mean latency of the successful ones, mean cost, and the same by complexity.",
  capability: read,
  resourceType: "model",
  params: s.ModelIdParams,
  response: s.ModelPerformanceResponse,
  successStatus: 200,
  handler: (ctx) => modelPerformance(ctx.db, ctx.principal, ctx.params.id),
});

export const listCallsOp = defineOperation({
  id: "listReasoningCalls",
  method: "GET",
  path: "/v1/reasoning/calls",
  tag,
  summary: "Recorded reasoning calls",
  description:
    "Newest first: who called under which delegation, for which entity, the routing decision, status, tokens, cost and the worst case reserved. Filters: model, delegation_id, entity_id, status.",
  capability: read,
  resourceType: "reasoning_call",
  query: s.ReasoningCallListQuery,
  response: s.ReasoningCallList,
  successStatus: 200,
  handler: (ctx) => listCalls(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getCallOp = defineOperation({
  id: "getReasoningCall",
  method: "GET",
  path: "/v1/reasoning/calls/{id}",
  tag,
  summary: "One reasoning call and its attempts",
  capability: read,
  resourceType: "reasoning_call",
  params: s.ReasoningCallIdParams,
  response: s.ReasoningCall,
  successStatus: 200,
  handler: (ctx) => getCall(ctx.db, ctx.principal, ctx.params.id),
});

export const callFeedbackOp = defineOperation({
  id: "reasoningCallFeedback",
  method: "POST",
  path: "/v1/reasoning/calls/{id}/feedback",
  tag,
  summary: "Feedback on a reasoning call",
  description:
    "A score (-1 bad, 0 neutral, 1 good), a signal (positive, negative, rephrase, correction; each implies the other when absent) and a comment; a later feedback replaces the earlier one. Prompt performance counts the signals.",
  capability: "svc_api:reasoning:think",
  resourceType: "reasoning_call",
  params: s.ReasoningCallIdParams,
  body: s.ReasoningFeedbackRequest,
  response: s.ReasoningCall,
  successStatus: 200,
  handler: (ctx) => recordFeedback(ctx.db, ctx.principal, ctx.params.id, ctx.body),
});

export const reasoningOperations = [
  thinkOp,
  listModelsOp,
  modelPerformanceOp,
  listCallsOp,
  getCallOp,
  callFeedbackOp,
  ...benchmarkOperations,
];
