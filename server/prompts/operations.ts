import { defineOperation } from "../http/operation";
import { ListQuery } from "../http/listSchemas";
import { deprecatePromptVersion } from "./deprecatePromptVersion";
import { getPrompt } from "./getPrompt";
import { getPromptPerformance } from "./getPromptPerformance";
import { getPromptVersion } from "./getPromptVersion";
import { listPromptAffinity } from "./listPromptAffinity";
import { listPromptHistory } from "./listPromptHistory";
import { listPrompts } from "./listPrompts";
import { listPromptVersions } from "./listPromptVersions";
import { publishPromptVersion } from "./publishPromptVersion";
import { renderPrompt } from "./renderPrompt";
import * as s from "./schemas";
import { setActiveVersion } from "./setActiveVersion";

const tag = "Prompts";
const read = "svc_api:prompts:read";
const publish = "svc_api:prompts:publish";
const resourceType = "prompt";

export const listPromptsOp = defineOperation({
  id: "listPrompts",
  method: "GET",
  path: "/v1/prompts",
  tag,
  summary: "List prompts",
  description: "The organization's prompts by key, filtered by namespace and scope.",
  capability: read,
  resourceType,
  query: s.PromptListQuery,
  response: s.PromptListResponse,
  successStatus: 200,
  handler: (ctx) => listPrompts(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getPromptOp = defineOperation({
  id: "getPrompt",
  method: "GET",
  path: "/v1/prompts/{key}",
  tag,
  summary: "A prompt's profile",
  capability: read,
  resourceType,
  params: s.PromptKeyParams,
  response: s.PromptProfile,
  successStatus: 200,
  handler: (ctx) => getPrompt(ctx.db, ctx.principal, ctx.params.key),
});

export const listPromptVersionsOp = defineOperation({
  id: "listPromptVersions",
  method: "GET",
  path: "/v1/prompts/{key}/versions",
  tag,
  summary: "A prompt's versions",
  description: "Newest (highest) version first.",
  capability: read,
  resourceType,
  params: s.PromptKeyParams,
  query: ListQuery,
  response: s.PromptVersionListResponse,
  successStatus: 200,
  handler: (ctx) => listPromptVersions(ctx.db, ctx.principal, ctx.params.key, ctx.query, ctx.secret),
});

export const publishPromptVersionOp = defineOperation({
  id: "publishPromptVersion",
  method: "POST",
  path: "/v1/prompts/{key}/versions",
  tag,
  summary: "Publish a prompt version",
  description:
    "`version` must be valid semver and greater than every published version of the key (pre-releases in semver order); a published version never changes (409 for an existing or lower one). `input_schema` must be a JSON Schema, read in the dialect its `$schema` names (draft-07 by default; 2019-09 and 2020-12 too); `content` a Mustache template; `extends_uri` (`<prompt_uri>@<version>`) a published version whose chain neither comes back to this one nor exceeds 8 levels. The first version creates the prompt and becomes its active version.",
  capability: publish,
  resourceType,
  params: s.PromptKeyParams,
  body: s.PromptPublishRequest,
  response: s.PromptVersion,
  successStatus: 201,
  problems: ["conflict"],
  async handler(ctx) {
    const created = await publishPromptVersion(ctx.db, ctx.principal, ctx.params.key, ctx.body, ctx.requestId);
    ctx.setResource(`${created.prompt_key}@${created.version}`);
    return created;
  },
});

export const getPromptVersionOp = defineOperation({
  id: "getPromptVersion",
  method: "GET",
  path: "/v1/prompts/{key}/versions/{version}",
  tag,
  summary: "A prompt version, exact or by semver range",
  description:
    "`{version}` is an exact version (deprecated ones included) or a semver range such as `^1.2` (URL-encoded: `%5E1.2`), answered with the highest non-deprecated version it matches.",
  capability: read,
  resourceType,
  params: s.PromptVersionParams,
  response: s.PromptVersion,
  successStatus: 200,
  handler: (ctx) => getPromptVersion(ctx.db, ctx.principal, ctx.params.key, ctx.params.version),
});

export const renderPromptOp = defineOperation({
  id: "renderPrompt",
  method: "POST",
  path: "/v1/prompts/{key}/render",
  tag,
  summary: "Render a prompt",
  description:
    "Checks `inputs` against the input schema of the version and of every version it extends (400 with `errors[]` naming JSON Pointers such as `/inputs/ticket`), then renders the Mustache template, each parent with the child's text at `{{> content}}` (or appended after a blank line).",
  capability: read,
  resourceType,
  params: s.PromptKeyParams,
  body: s.PromptRenderRequest,
  response: s.PromptRenderResponse,
  successStatus: 200,
  async handler(ctx) {
    const { prompt_key, version, text } = await renderPrompt(ctx.db, ctx.principal.orgDid, ctx.params.key, ctx.body);
    ctx.setResource(`${prompt_key}@${version}`);
    return { prompt_key, version, text };
  },
});

export const setActiveVersionOp = defineOperation({
  id: "setPromptActiveVersion",
  method: "POST",
  path: "/v1/prompts/{key}/active-version",
  tag,
  summary: "Move a prompt's active version",
  description:
    "An addition beyond the contract's paths. The version must be published and not deprecated (409). The move is recorded in the prompt's history (`GET /v1/prompts/{key}/history`) with the caller and this request's id.",
  capability: publish,
  resourceType,
  params: s.PromptKeyParams,
  body: s.PromptActiveVersionRequest,
  response: s.PromptProfile,
  successStatus: 200,
  problems: ["conflict"],
  async handler(ctx) {
    ctx.setResource(ctx.params.key);
    return setActiveVersion(ctx.db, ctx.principal.orgDid, ctx.params.key, ctx.body.version, {
      actorDid: ctx.principal.actorDid,
      source: "call",
      requestId: ctx.requestId,
    });
  },
});

export const deprecatePromptVersionOp = defineOperation({
  id: "deprecatePromptVersion",
  method: "POST",
  path: "/v1/prompts/{key}/versions/{version}/deprecate",
  tag,
  summary: "Deprecate a prompt version",
  description:
    "An addition beyond the contract's paths: active → deprecated, recorded in the prompt's history. A deprecated version (409) or the active version (409: move it first) cannot be deprecated. A deprecated version stays readable and renderable by its exact version; no range picks it.",
  capability: publish,
  resourceType,
  params: s.PromptVersionParams,
  response: s.PromptVersion,
  successStatus: 200,
  problems: ["conflict", "illegal_state_transition"],
  async handler(ctx) {
    ctx.setResource(`${ctx.params.key}@${ctx.params.version}`);
    return deprecatePromptVersion(ctx.db, ctx.principal, ctx.params.key, ctx.params.version, ctx.requestId);
  },
});

export const listPromptHistoryOp = defineOperation({
  id: "listPromptHistory",
  method: "GET",
  path: "/v1/prompts/{key}/history",
  tag,
  summary: "A prompt's history",
  description:
    "An addition beyond the contract's paths: the moves of the active version and of the recommended model, and the deprecations, newest first, each with who, from, to, when, and the request or learning proposal behind it.",
  capability: read,
  resourceType,
  params: s.PromptKeyParams,
  query: ListQuery,
  response: s.PromptHistoryResponse,
  successStatus: 200,
  handler: (ctx) => listPromptHistory(ctx.db, ctx.principal, ctx.params.key, ctx.query, ctx.secret),
});

export const getPromptPerformanceOp = defineOperation({
  id: "getPromptPerformance",
  method: "GET",
  path: "/v1/prompts/{key}/performance",
  tag,
  summary: "A prompt's performance, per model",
  description:
    "From the reasoning calls that named the prompt (`prompt` of `POST /v1/reasoning/think`, any version) over the last `window_days` days, and the feedback signals sent for them (`POST /v1/reasoning/calls/{id}/feedback`). Pending calls are left out.",
  capability: read,
  resourceType,
  params: s.PromptKeyParams,
  query: s.PromptPerformanceQuery,
  response: s.PromptPerformanceResponse,
  successStatus: 200,
  handler: (ctx) =>
    getPromptPerformance(ctx.db, ctx.database.engine, ctx.principal, ctx.params.key, ctx.query.window_days),
});

export const listPromptAffinityOp = defineOperation({
  id: "listPromptAffinity",
  method: "GET",
  path: "/v1/prompts/affinity",
  tag,
  summary: "Prompt × model affinity",
  description:
    "Each (prompt, model) pair's calls over the last `window_days` days: sample size, averages, success rate and `affinity_score` (0..1: success rate, the share of positive feedback signals, relative cost and latency, shrunk toward 0.5 for small samples; the README gives the formula). By prompt key, best score first.",
  capability: read,
  resourceType,
  query: s.PromptAffinityQuery,
  response: s.PromptAffinityResponse,
  successStatus: 200,
  handler: (ctx) => listPromptAffinity(ctx.db, ctx.database.engine, ctx.principal, ctx.query, ctx.secret),
});

export const promptOperations = [
  listPromptsOp,
  listPromptAffinityOp,
  getPromptOp,
  listPromptVersionsOp,
  publishPromptVersionOp,
  getPromptVersionOp,
  renderPromptOp,
  setActiveVersionOp,
  deprecatePromptVersionOp,
  listPromptHistoryOp,
  getPromptPerformanceOp,
];
