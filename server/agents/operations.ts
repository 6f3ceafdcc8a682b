import { defineOperation } from "../http/operation";
import { invokeAgent } from "../executions/invokeAgent";
import { AsyncExecution } from "../executions/schemas";
import { agentStatus, listAgents, setAgentStatus } from "./agents";
import { deployAgent } from "./deployAgent";
import { getAgentUsage } from "./getAgentUsage";
import { UsageQuery } from "../identity/schemas";
import * as s from "./schemas";

const tag = "Agents";

export const listAgentsOp = defineOperation({
  id: "listAgents",
  method: "GET",
  path: "/v1/agents",
  tag,
  summary: "List the organization's agents",
  description:
    "Newest first. The list keeps the spec's shape: `data.agents` and `data.next_cursor` (pass it back as `?cursor=`).",
  capability: "svc_api:agents:read",
  resourceType: "agent",
  query: s.AgentListQuery,
  response: s.AgentListResponse,
  successStatus: 200,
  handler: (ctx) => listAgents(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const deployAgentOp = defineOperation({
  id: "deployAgent",
  method: "POST",
  path: "/v1/agents/deploy",
  tag,
  summary: "Deploy an agent (a new version when the name exists)",
  description:
    "Checks the bundle's hash (`sha256:<hex>` of the decoded bundle; a mismatch is 400 on bundleHash) and size (SVC_MAX_BUNDLE_BYTES, default 512 KiB decoded), the manifest (strict: other keys are 400 UNKNOWN_FIELD; limits within SVC_AGENT_MAX_MEMORY_MB and SVC_AGENT_MAX_TIMEOUT_MS), and that you hold every capability it lists (else 403). Answers 202 while the bundle is loaded in the sandbox; the agent then becomes active, or inactive with the error in its status. With `wait: true` the bundle is loaded before the answer, 201 with the outcome. Redeploying an active agent keeps it active on its previous version until the new one is ready.",
  capability: "svc_api:agents:deploy",
  resourceType: "agent",
  body: s.AgentDeployRequest,
  response: s.AgentDeployResponse,
  successStatus: 202,
  otherSuccessStatuses: [201],
  async handler(ctx) {
    const out = await deployAgent(ctx.db, ctx.principal, ctx.body, ctx.requestId);
    ctx.setResource(out.agentId);
    if (out.created) ctx.setStatus(201);
    const answer = { data: { agentId: out.agentId, status: out.status, trace_id: ctx.requestId } };
    const settle = out.settle;
    if (settle) ctx.afterCommit(async () => void (answer.data.status = await settle(ctx.database)));
    return answer;
  },
});

export const agentStatusOp = defineOperation({
  id: "getAgentStatus",
  method: "GET",
  path: "/v1/agents/{id}/status",
  tag,
  summary: "An agent's status, current version and runtime",
  description:
    "`runtime` gives the current version's limits, bundle hash and deploy time, why the agent is inactive after a failed first deploy (`error`), and the latest deploys (`last_deploy`, `versions`).",
  capability: "svc_api:agents:read",
  resourceType: "agent",
  params: s.AgentIdParams,
  response: s.AgentStatusResponse,
  successStatus: 200,
  handler: (ctx) => agentStatus(ctx.db, ctx.principal, ctx.params.id),
});

/** activate and deactivate: one move each way between active and inactive, declared once. */
function statusMoveOp(move: {
  id: string;
  verb: "activate" | "deactivate";
  target: "active" | "inactive";
  summary: string;
  description: string;
}) {
  return defineOperation({
    id: move.id,
    method: "POST",
    path: `/v1/agents/{id}/${move.verb}`,
    tag,
    summary: move.summary,
    description: move.description,
    capability: "svc_api:agents:manage",
    resourceType: "agent",
    params: s.AgentIdParams,
    response: s.AgentStatusResponse,
    successStatus: 200,
    problems: ["illegal_state_transition"],
    async handler(ctx) {
      ctx.setResource(ctx.params.id);
      return setAgentStatus(ctx.db, ctx.principal, ctx.params.id, move.target);
    },
  });
}

export const activateAgentOp = statusMoveOp({
  id: "activateAgent",
  verb: "activate",
  target: "active",
  summary: "Activate an inactive agent",
  description:
    "inactive → active; any other move is 409 naming both states. An agent none of whose deploys succeeded cannot be activated.",
});

export const deactivateAgentOp = statusMoveOp({
  id: "deactivateAgent",
  verb: "deactivate",
  target: "inactive",
  summary: "Deactivate an active agent",
  description:
    "active → inactive; any other move is 409 naming both states. An inactive agent cannot be invoked; running executions go on.",
});

export const invokeAgentOp = defineOperation({
  id: "invokeAgent",
  method: "POST",
  path: "/v1/agents/{id}/invoke",
  tag,
  summary: "Run an agent: queue an execution",
  description:
    "Answers 202 with the queued AsyncExecution. The run acts under a delegation derived from yours, narrowed to the manifest's capabilities you hold and bounded in time: revoking your delegation cancels it (error_json.code delegation_revoked). A failed attempt is retried with backoff while current_attempt < max_attempts. A callback_url is POSTed the execution when it ends, signed with the organization's callback secret (Standard Webhooks); loopback, private and metadata addresses are refused (400).",
  capability: "svc_api:agents:invoke",
  resourceType: "execution",
  params: s.AgentIdParams,
  body: s.InvokeRequest,
  bodyOptional: true,
  response: AsyncExecution,
  successStatus: 202,
  problems: ["illegal_state_transition"],
  async handler(ctx) {
    const out = await invokeAgent(ctx.db, ctx.principal, ctx.params.id, ctx.body ?? { max_attempts: 3 });
    ctx.setResource(out.id);
    return out;
  },
});

export const getAgentUsageOp = defineOperation({
  id: "getAgentUsage",
  method: "GET",
  path: "/v1/agents/{id}/usage",
  tag,
  summary: "What an agent's runs really used, against what its manifest declares",
  description:
    "Per capability the current manifest declares (trigger declarations aside), the calls its runs made that the gate let through and refused since `since` (default 30 days back); `unused` lists the declared capabilities no run used. Counted from a rollup kept as provenance records are written.",
  capability: "svc_api:agents:read",
  resourceType: "agent",
  params: s.AgentIdParams,
  query: UsageQuery,
  response: s.AgentUsage,
  successStatus: 200,
  handler: (ctx) => getAgentUsage(ctx.db, ctx.principal, ctx.params.id, ctx.query.since),
});

export const agentOperations = [
  listAgentsOp,
  deployAgentOp,
  agentStatusOp,
  activateAgentOp,
  deactivateAgentOp,
  invokeAgentOp,
  getAgentUsageOp,
];
