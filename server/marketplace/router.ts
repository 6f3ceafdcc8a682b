import { z } from "zod";
import { consoleMutation, consoleQuery, defineConsoleProcedure, mutationFrom, queryFrom } from "../trpc/procedures";
import { router } from "../trpc/init";
import { getConnectorClient, setConnectorClient } from "./connectorClients";
import { installationState } from "./installationState";
import * as inv from "./invocationOperations";
import * as op from "./operations";
import * as s from "./schemas";

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

/** The console's marketplace procedures: the /v1 operations, plus the OAuth client form and the install flow's state. */
export const marketplaceRouter = router({
  connectors: queryFrom(op.listConnectorsOp),
  connector: queryFrom(op.getConnectorOp),
  install: mutationFrom(op.installConnectorOp),
  installations: queryFrom(op.listInstallationsOp),
  installation: queryFrom(op.getInstallationOp),
  updateInstallation: mutationFrom(op.updateInstallationOp),
  uninstall: mutationFrom(op.uninstallInstallationOp),
  installationState: consoleQuery(installationStateProcedure),
  connectorClient: consoleQuery(getConnectorClientProcedure),
  setConnectorClient: consoleMutation(setConnectorClientProcedure),
  invoke: mutationFrom(inv.invokeConnectorOp),
  usage: queryFrom(inv.installationUsageOp),
  ratings: queryFrom(inv.listRatingsOp),
  rate: mutationFrom(inv.rateConnectorOp),
  ratingSummary: queryFrom(inv.ratingSummaryOp),
});
