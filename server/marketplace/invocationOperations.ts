import { ListQuery } from "../http/listSchemas";
import { defineOperation } from "../http/operation";
import { completeInvocation, linkInvocation, prepareInvocation } from "./invokeConnector";
import { getInstallationUsage } from "./getInstallationUsage";
import { getRatingSummary } from "./getRatingSummary";
import * as s from "./schemas";
import { listRatings } from "./listRatings";
import { rateConnector } from "./rateConnector";

const tag = "Marketplace";

export const invokeConnectorOp = defineOperation({
  id: "invokeConnector",
  method: "POST",
  path: "/v1/marketplace/installations/{id}/invoke",
  tag,
  summary: "Invoke a connector action",
  description:
    "Runs one of the connector's actions through the installation: the action must be within its granted_permissions (else 403 action_not_granted), the installation active (else 409 installation_not_active), the input valid against the action's input_schema (else 400 with errors[]). The provider is called through the outbound guard with the installation's token, a time limit (SVC_CONNECTOR_TIMEOUT_MS) and a cap on its answer (SVC_CONNECTOR_MAX_RESPONSE_BYTES); its status and answer come back as status_code and result, whatever the status. When the provider cannot be reached, status_code is null and error says why. Every invocation is recorded (usage, ratings) and linked to this call's provenance record. Tokens never appear in the answer.",
  capability: "svc_api:marketplace:invoke",
  resourceType: "connector_installation",
  params: s.InstallationIdParams,
  body: s.InvokeRequest,
  response: s.InvokeResult,
  successStatus: 200,
  problems: ["installation_not_active", "action_not_granted", "outbound_refused"],
  async handler(ctx) {
    ctx.setResource(ctx.params.id);
    const plan = await prepareInvocation(ctx.db, ctx.database.engine, ctx.principal, ctx.params.id, ctx.body);
    const answer: s.InvokeResultT = {
      invocation_id: plan.invocationId,
      status_code: null,
      duration_ms: 0,
      result: null,
      provenance_id: "",
      successful: false,
      error: null,
    };
    ctx.onRecord(async (tx, record) => {
      answer.provenance_id = record.id;
      await linkInvocation(tx, ctx.database.engine, plan.invocationId, record.id);
    });
    // The provider is called once the call's transaction has committed: never with the write lock held.
    ctx.afterCommit(async () => void Object.assign(answer, await completeInvocation(ctx.database, plan)));
    return answer;
  },
});

export const installationUsageOp = defineOperation({
  id: "getInstallationUsage",
  method: "GET",
  path: "/v1/marketplace/installations/{id}/usage",
  tag,
  summary: "An installation's usage over 30 days",
  description:
    "Totals and a daily breakdown (UTC days, every day present) computed from the installation's invocation records, not from counters.",
  capability: "svc_api:marketplace:read",
  resourceType: "connector_installation",
  params: s.InstallationIdParams,
  response: s.InstallationUsage,
  successStatus: 200,
  handler: (ctx) => getInstallationUsage(ctx.db, ctx.database.engine, ctx.principal, ctx.params.id),
});

export const listRatingsOp = defineOperation({
  id: "listConnectorRatings",
  method: "GET",
  path: "/v1/marketplace/connectors/{id}/ratings",
  tag,
  summary: "A connector's ratings and reviews",
  description: "Every organization's ratings of the connector, the most recently changed first.",
  capability: "svc_api:marketplace:read",
  resourceType: "connector",
  params: s.ConnectorIdParams,
  query: ListQuery,
  response: s.RatingList,
  successStatus: 200,
  handler: (ctx) => listRatings(ctx.db, ctx.params.id, ctx.query, ctx.secret),
});

export const rateConnectorOp = defineOperation({
  id: "rateConnector",
  method: "POST",
  path: "/v1/marketplace/connectors/{id}/ratings",
  tag,
  summary: "Rate a connector",
  description:
    "One rating per person and connector: the first is 201, a later one replaces it (200). Only organizations with at least one successful invocation of the connector may rate it (else 403 rating_requires_usage).",
  capability: "svc_api:marketplace:rate",
  resourceType: "connector_rating",
  params: s.ConnectorIdParams,
  body: s.RatingRequest,
  response: s.ConnectorRating,
  successStatus: 201,
  otherSuccessStatuses: [200],
  problems: ["rating_requires_usage"],
  async handler(ctx) {
    const { created, rating } = await rateConnector(ctx.db, ctx.principal, ctx.params.id, ctx.body);
    ctx.setResource(rating.rating_id);
    if (!created) ctx.setStatus(200);
    return rating;
  },
});

export const ratingSummaryOp = defineOperation({
  id: "getConnectorRatingSummary",
  method: "GET",
  path: "/v1/marketplace/connectors/{id}/ratings/summary",
  tag,
  summary: "A connector's rating summary",
  description: "The average (two decimals, 0 without ratings), the count and the distribution by grade.",
  capability: "svc_api:marketplace:read",
  resourceType: "connector",
  params: s.ConnectorIdParams,
  response: s.RatingSummary,
  successStatus: 200,
  handler: (ctx) => getRatingSummary(ctx.db, ctx.params.id),
});

/** The invocation, usage and rating operations of the marketplace (the catalogue's and installs' are in operations.ts). */
export const invocationOperations = [
  invokeConnectorOp,
  installationUsageOp,
  listRatingsOp,
  rateConnectorOp,
  ratingSummaryOp,
];
