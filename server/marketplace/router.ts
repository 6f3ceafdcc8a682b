import { router } from "../trpc/init";
import { consoleMutation, consoleQuery, mutationFrom, queryFrom } from "../trpc/procedures";
import {
  getConnectorClientProcedure,
  installationStateProcedure,
  setConnectorClientProcedure,
} from "./consoleProcedures";
import * as op from "./operations";

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
  invoke: mutationFrom(op.invokeConnectorOp),
  usage: queryFrom(op.installationUsageOp),
  ratings: queryFrom(op.listRatingsOp),
  rate: mutationFrom(op.rateConnectorOp),
  ratingSummary: queryFrom(op.ratingSummaryOp),
});
