import type { z } from "zod";
import type { Db } from "../db/client";
import { NotFound, ValidationFailed } from "../errors";
import type { Principal } from "../governance/principal";
import { configuredClient, connectorById } from "./catalogue";
import { clientSecretContext } from "./oauthClient";
import type { ConnectorClientRequest, ConnectorClientView } from "./schemas";
import { seal } from "./tokenSealing";

function oauthConnector(id: string) {
  const c = connectorById(id);
  if (!c) throw NotFound("connector", id);
  if (!c.definition.oauth.required)
    throw ValidationFailed([
      { field: "connector_id", code: "INVALID_VALUE", message: `${c.definition.name} does not use OAuth.` },
    ]);
  return c;
}

/**
 * Which OAuth client the organization uses at a connector's provider, and where it comes from
 * (the console's form, the environment, the definition). The secret is never shown, only whether
 * there is one.
 */
export async function getConnectorClient(
  db: Db,
  principal: Principal,
  connectorId: string,
): Promise<z.input<typeof ConnectorClientView>> {
  const c = oauthConnector(connectorId);
  const row = await db.connectorClient.findUnique({
    where: { orgDid_connectorId: { orgDid: principal.orgDid, connectorId } },
  });
  if (row)
    return {
      connector_id: connectorId,
      client_id: row.clientId,
      has_client_secret: row.clientSecretSealed !== null,
      source: "console",
      updated_at: row.updatedAt.toISOString(),
    };
  const configured = configuredClient(c);
  return {
    connector_id: connectorId,
    client_id: configured?.clientId ?? null,
    has_client_secret: Boolean(configured?.clientSecret),
    source: configured?.source ?? "none",
    updated_at: null,
  };
}

/**
 * Sets the organization's OAuth client for a connector (an administrator's console form): it
 * replaces the configured one for this organization's future installs and refreshes. The
 * secret is sealed (AES-256-GCM, bound to the organization and connector). Leaving the secret
 * out keeps the one set before (a public client if there was none).
 */
export async function setConnectorClient(
  db: Db,
  principal: Principal,
  input: z.output<typeof ConnectorClientRequest>,
): Promise<z.input<typeof ConnectorClientView>> {
  oauthConnector(input.connector_id);
  const key = { orgDid: principal.orgDid, connectorId: input.connector_id };
  const sealed =
    input.client_secret !== undefined
      ? await seal(input.client_secret, clientSecretContext(principal.orgDid, input.connector_id))
      : undefined;
  await db.connectorClient.upsert({
    where: { orgDid_connectorId: key },
    create: { ...key, clientId: input.client_id, clientSecretSealed: sealed ?? null, updatedBy: principal.actorDid },
    update: {
      clientId: input.client_id,
      ...(sealed !== undefined ? { clientSecretSealed: sealed } : {}),
      updatedBy: principal.actorDid,
    },
  });
  return getConnectorClient(db, principal, input.connector_id);
}
