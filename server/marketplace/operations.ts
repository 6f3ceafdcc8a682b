import { ListQuery } from "../http/listSchemas";
import { defineOperation } from "../http/operation";
import { callbackPrincipal, completeOAuth } from "./completeOAuth";
import { getConnector } from "./getConnector";
import { getInstallation } from "./getInstallation";
import { getInstallationUsage } from "./getInstallationUsage";
import { getRatingSummary } from "./getRatingSummary";
import { installConnector } from "./installConnector";
import { invokeInCall } from "./invokeConnector";
import { listConnectors } from "./listConnectors";
import { listInstallations } from "./listInstallations";
import { listRatings } from "./listRatings";
import { rateConnector } from "./rateConnector";
import * as s from "./schemas";
import { uninstallInstallation } from "./uninstallInstallation";
import { updateInstallation } from "./updateInstallation";

const tag = "Marketplace";
const read = "svc_api:marketplace:read";
const install = "svc_api:marketplace:install";

export const listConnectorsOp = defineOperation({
  id: "listConnectors",
  method: "GET",
  path: "/v1/marketplace/connectors",
  tag,
  summary: "List the connector catalogue",
  description:
    "Every connector of the catalogue (built-in and SVC_CONNECTORS_DIR), by name, with live install counts, ratings and health. Filters: `q` (words in name, provider, description, capabilities), `capability`, `pricing_model`, `certified`, `deployment_mode`, `publisher_id`.",
  capability: read,
  resourceType: "connector",
  query: s.ConnectorListQuery,
  response: s.ConnectorList,
  successStatus: 200,
  handler: (ctx) => listConnectors(ctx.database.raw, ctx.query, ctx.secret),
});

export const getConnectorOp = defineOperation({
  id: "getConnector",
  method: "GET",
  path: "/v1/marketplace/connectors/{id}",
  tag,
  summary: "Get a connector",
  description:
    "The connector's definition (Markdown description, configuration_schema, OAuth endpoints and scopes, actions) with statistics computed now and the worker's last health check.",
  capability: read,
  resourceType: "connector",
  params: s.ConnectorIdParams,
  response: s.ConnectorDetails,
  successStatus: 200,
  handler: (ctx) => getConnector(ctx.db, ctx.database.raw, ctx.params.id),
});

export const installConnectorOp = defineOperation({
  id: "installConnector",
  method: "POST",
  path: "/v1/marketplace/connectors/{id}/install",
  tag,
  summary: "Install a connector",
  description:
    "`config` is validated against the connector's configuration_schema (errors[] name each field under `config.`). Without OAuth: 201 InstallationActive and `connector.installed`. With OAuth: 201 InstallationPendingOAuth; send the person to `oauth_authorization_url` (PKCE S256, single-use state, valid 15 minutes); the provider brings them back to /v1/marketplace/oauth/callback. 409 `connector_not_configured` when no OAuth client is set for the connector.",
  capability: install,
  resourceType: "installation",
  params: s.ConnectorIdParams,
  body: s.InstallRequest,
  response: s.InstallResult,
  // The single-use state lets whoever holds it finish the authorization as the installer.
  secretFields: ["oauth_authorization_url", "oauth_state"],
  successStatus: 201,
  problems: ["connector_not_configured", "outbound_refused"],
  async handler(ctx) {
    const result = await installConnector(ctx.db, ctx.principal, ctx.params.id, ctx.body);
    ctx.setResource(result.installation_id);
    return result;
  },
});

export const oauthCallbackOp = defineOperation({
  id: "completeConnectorOAuth",
  method: "GET",
  path: "/v1/marketplace/oauth/callback",
  tag,
  summary: "OAuth callback (the provider's redirect)",
  description:
    "The browser lands here from the provider's consent screen; no bearer token: the caller is the installer the `state` was issued to. Answers 303 to the console's installation page: `?oauth=connected`, or `?oauth=failed&reason=` (access_denied and other provider errors, issuer_mismatch or issuer_missing (RFC 9207: `iss` missing from a provider whose metadata advertises `authorization_response_iss_parameter_supported`), token_exchange_failed); the installation then expired. An unknown, used or expired state is 400 `oauth_state_invalid`.",
  capability: install,
  resourceType: "installation",
  query: s.OAuthCallbackQuery,
  response: s.OAuthCallbackRedirect,
  successStatus: 303,
  problems: ["oauth_state_invalid"],
  authenticateRequest: callbackPrincipal,
  handler: (ctx) => completeOAuth(ctx.db, ctx.principal, ctx.query, (id) => ctx.setResource(id)),
});

export const listInstallationsOp = defineOperation({
  id: "listInstallations",
  method: "GET",
  path: "/v1/marketplace/installations",
  tag,
  summary: "List installations",
  description:
    "The organization's installations, newest first (authorizations still pending or expired are not listed).",
  capability: read,
  resourceType: "installation",
  query: s.InstallationListQuery,
  response: s.InstallationList,
  successStatus: 200,
  handler: (ctx) => listInstallations(ctx.db, ctx.principal, ctx.query, ctx.secret),
});

export const getInstallationOp = defineOperation({
  id: "getInstallation",
  method: "GET",
  path: "/v1/marketplace/installations/{id}",
  tag,
  summary: "Get an installation",
  capability: read,
  resourceType: "installation",
  params: s.InstallationIdParams,
  response: s.ConnectorInstallation,
  successStatus: 200,
  handler: (ctx) => getInstallation(ctx.db, ctx.principal, ctx.params.id),
});

export const updateInstallationOp = defineOperation({
  id: "updateInstallation",
  method: "PATCH",
  path: "/v1/marketplace/installations/{id}",
  tag,
  summary: "Change an installation",
  description:
    "Config (validated again), granted_permissions, base_url, or status `active` ⇄ `suspended`. An uninstalled installation is final (409).",
  capability: install,
  resourceType: "installation",
  params: s.InstallationIdParams,
  body: s.InstallationUpdateRequest,
  response: s.ConnectorInstallation,
  successStatus: 200,
  problems: ["outbound_refused"],
  handler: (ctx) => updateInstallation(ctx.db, ctx.principal, ctx.params.id, ctx.body),
});

export const uninstallInstallationOp = defineOperation({
  id: "uninstallInstallation",
  method: "DELETE",
  path: "/v1/marketplace/installations/{id}",
  tag,
  summary: "Uninstall",
  description:
    "The installation becomes `uninstalled` (final), its tokens are erased, and revoked at the provider where it offers revocation (RFC 7009).",
  capability: install,
  resourceType: "installation",
  params: s.InstallationIdParams,
  response: s.ConnectorInstallation,
  successStatus: 200,
  handler: (ctx) => uninstallInstallation(ctx.db, ctx.principal, ctx.params.id, ctx.afterCommit),
});

/** The marketplace's catalogue and installation operations. */
export const marketplaceOperations = [
  listConnectorsOp,
  getConnectorOp,
  installConnectorOp,
  oauthCallbackOp,
  listInstallationsOp,
  getInstallationOp,
  updateInstallationOp,
  uninstallInstallationOp,
];

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
  handler: (ctx) => invokeInCall(ctx, ctx.params.id, ctx.body),
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

/** The marketplace's invocation, usage and rating operations. */
export const invocationOperations = [
  invokeConnectorOp,
  installationUsageOp,
  listRatingsOp,
  rateConnectorOp,
  ratingSummaryOp,
];
