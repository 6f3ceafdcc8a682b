import { createHash } from "node:crypto";
import * as oauth from "oauth4webapi";
import type { z } from "zod";
import type { Db } from "../db/client";
import { NotFound, ValidationFailed, type FieldError } from "../errors";
import { putPlatformEvent } from "../events/platformEvents";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { assertOutboundUrl } from "../outbound/assertOutboundUrl";
import { oauthCallbackUrl } from "./callbackUrl";
import { connectorById, type CatalogueConnector } from "./catalogue";
import { jsonSchemaErrors } from "./jsonSchemaErrors";
import { providerClient } from "./oauthClient";
import type { InstallRequest, InstallResult } from "./schemas";
import { seal } from "./tokenSealing";
import { initialBrowserBinding, stateHashOf } from "./browserBinding";

export { stateHashOf };

/** How long an authorization link (and its pending installation) lives: the spec's 15 minutes. */
export const OAUTH_STATE_TTL_MS = 15 * 60_000;

/** The stored form of a `state`: only its hash is kept, so a database reader cannot complete someone's consent. */
export const verifierContext = (stateHash: string) => `state:${stateHash}`;

/**
 * The checks an installation's settings pass, at install and on PATCH: the config against the
 * connector's configuration_schema (ajv), granted permissions among its actions, a base URL the
 * outbound guard would call.
 */
export function checkInstallationSettings(
  connector: CatalogueConnector,
  settings: { config?: Record<string, unknown>; granted_permissions?: string[]; base_url?: string | null },
): void {
  const errors: FieldError[] = [];
  if (settings.config !== undefined && !connector.validateConfig(settings.config))
    errors.push(...jsonSchemaErrors(connector.validateConfig.errors, "config"));
  for (const [i, permission] of (settings.granted_permissions ?? []).entries())
    if (!connector.actions.has(permission))
      errors.push({
        field: `granted_permissions.${i}`,
        code: "INVALID_VALUE",
        message: `${connector.definition.name} has no action ${JSON.stringify(permission)}.`,
        expected: [...connector.actions.keys()].join(" | "),
        received: permission.slice(0, 100),
      });
  if (errors.length) throw ValidationFailed(errors);
  if (settings.base_url) assertOutboundUrl(settings.base_url, { field: "base_url" });
}

/**
 * Installs a connector for the caller's organization. A connector without OAuth is active at
 * once (201 InstallationActive, `connector.installed` on the bus). One with OAuth is
 * `pending_oauth` (201 InstallationPendingOAuth): the authorization URL carries a PKCE S256
 * challenge and a single-use `state` bound to this installation and installer, valid 15
 * minutes; the callback completes it (completeOAuth.ts). The verifier is kept sealed, the state
 * only as a hash.
 */
export async function installConnector(
  db: Db,
  principal: Principal,
  connectorId: string,
  body: z.output<typeof InstallRequest>,
): Promise<z.input<typeof InstallResult>> {
  const connector = connectorById(connectorId);
  if (!connector) throw NotFound("connector", connectorId);
  const d = connector.definition;
  if (!d.deployment_modes.includes(body.deployment_mode))
    throw ValidationFailed([
      {
        field: "deployment_mode",
        code: "INVALID_ENUM",
        message: `${d.name} supports ${d.deployment_modes.join(", ")}.`,
        expected: d.deployment_modes.join(" | "),
        received: body.deployment_mode,
      },
    ]);
  checkInstallationSettings(connector, body);
  const redirectUri = oauthCallbackUrl();
  if (body.redirect_uri !== undefined && body.redirect_uri !== redirectUri)
    throw ValidationFailed([
      {
        field: "redirect_uri",
        code: "INVALID_VALUE",
        message: `The provider sends the browser back to svc's callback; the only redirect_uri is ${redirectUri}.`,
        expected: redirectUri,
        received: body.redirect_uri.slice(0, 200),
      },
    ]);

  const id = newId("ins");
  const now = new Date();
  const base = {
    id,
    orgDid: principal.orgDid,
    connectorId,
    deploymentMode: body.deployment_mode,
    config: body.config as object,
    grantedPermissions: body.granted_permissions ?? [...connector.actions.keys()],
    baseUrl: body.base_url ?? null,
    installedBy: principal.actorDid,
    installedByDelegationId: principal.delegationId || null,
  };

  if (!d.oauth.required) {
    await db.connectorInstallation.create({ data: { ...base, status: "active", installedAt: now } });
    await connectorInstalled(db, base.orgDid, { ...base, installedAt: now });
    return { installation_id: id, connector_id: connectorId, status: "active", installed_at: now.toISOString() };
  }

  const provider = await providerClient(db, principal.orgDid, connector);
  const state = oauth.generateRandomState();
  const verifier = oauth.generateRandomCodeVerifier();
  const stateHash = stateHashOf(state);
  const expiresAt = new Date(now.getTime() + OAUTH_STATE_TTL_MS);
  const url = new URL(provider.as.authorization_endpoint!);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", provider.client.client_id);
  url.searchParams.set("redirect_uri", redirectUri);
  if (d.oauth.scopes.length) url.searchParams.set("scope", d.oauth.scopes.join(provider.scopeSeparator));
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  for (const [k, v] of Object.entries(d.oauth.authorization_params ?? {})) url.searchParams.set(k, v);

  await db.connectorInstallation.create({ data: { ...base, status: "pending_oauth", pendingExpiresAt: expiresAt } });
  await db.connectorOAuthState.create({
    data: {
      stateHash,
      installationId: id,
      orgDid: principal.orgDid,
      connectorId,
      installerDid: principal.actorDid,
      codeVerifierSealed: await seal(verifier, verifierContext(stateHash)),
      redirectUri,
      expiresAt,
      browserBinding: initialBrowserBinding(principal),
    },
  });
  return {
    installation_id: id,
    connector_id: connectorId,
    status: "pending_oauth",
    oauth_authorization_url: url.toString(),
    oauth_state: state,
    redirect_uri: redirectUri,
    expires_at: expiresAt.toISOString(),
  };
}

/** `connector.installed` on the organization's bus, in the installing (or completing) transaction. */
export async function connectorInstalled(
  tx: Db,
  orgDid: string,
  i: { id: string; connectorId: string; installedBy: string; deploymentMode: string; installedAt: Date },
): Promise<void> {
  await putPlatformEvent(tx, undefined, orgDid, {
    type: "connector.installed",
    payload: {
      installation_id: i.id,
      connector_id: i.connectorId,
      installed_by: i.installedBy,
      deployment_mode: i.deploymentMode,
      installed_at: i.installedAt.toISOString(),
    },
    source: "svc",
  });
}
