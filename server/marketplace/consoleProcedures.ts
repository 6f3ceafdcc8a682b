import { z } from "zod";
import { defineConsoleProcedure } from "../trpc/procedures";
import { getConnectorClient, setConnectorClient } from "./connectorClients";
import { installationState } from "./installationState";
import * as s from "./schemas";

/** What the console's marketplace pages need that /v1 does not offer a token. */

/** An administrator's OAuth client for a connector (the console's form; the secret is never shown back). */
export const setConnectorClientProcedure = defineConsoleProcedure({
  summary: "Set the organization's OAuth client (id and secret) at a connector's provider",
  roles: ["admin"],
  capability: "svc_api:marketplace:install",
  resourceType: "connector",
  input: s.ConnectorClientRequest,
  response: s.ConnectorClientView,
  async handler(ctx) {
    ctx.setResource(ctx.input.connector_id);
    return setConnectorClient(ctx.db, ctx.principal, ctx.input);
  },
});

export const getConnectorClientProcedure = defineConsoleProcedure({
  summary: "The OAuth client the organization uses at a connector's provider, and where it comes from",
  roles: ["admin"],
  capability: "svc_api:marketplace:read",
  resourceType: "connector",
  input: z.object({ connector_id: z.string().min(1).max(100) }),
  response: s.ConnectorClientView,
  async handler(ctx) {
    ctx.setResource(ctx.input.connector_id);
    return getConnectorClient(ctx.db, ctx.principal, ctx.input.connector_id);
  },
});

export const installationStateProcedure = defineConsoleProcedure({
  summary: "Where an installation stands, pending and expired authorizations included",
  roles: ["admin", "approver", "viewer"],
  capability: "svc_api:marketplace:read",
  resourceType: "installation",
  input: z.object({ id: z.string().min(1).max(100) }),
  response: s.InstallationStateView,
  async handler(ctx) {
    ctx.setResource(ctx.input.id);
    return installationState(ctx.db, ctx.principal, ctx.input.id);
  },
});
