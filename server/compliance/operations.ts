import { defineOperation } from "../http/operation";
import { deploymentCompliance } from "./deploymentCompliance";
import * as s from "./schemas";
import { walledGardenStatus } from "./walledGarden";

const tag = "Compliance";

export const deploymentComplianceOp = defineOperation({
  id: "getDeploymentCompliance",
  method: "GET",
  path: "/v1/compliance/deployment",
  tag,
  summary: "The deployment's compliance report, computed now and HMAC-signed",
  capability: "svc_api:compliance:read",
  resourceType: "compliance_report",
  response: s.DeploymentComplianceResponse,
  successStatus: 200,
  handler: (ctx) => deploymentCompliance(ctx.database, ctx.principal.orgDid),
});

export const walledGardenOp = defineOperation({
  id: "getWalledGardenStatus",
  method: "GET",
  path: "/v1/compliance/walled-garden",
  tag,
  summary: "Whether the ledger is verified beyond this service (witness cosignatures)",
  capability: "svc_api:compliance:read",
  resourceType: "walled_garden_status",
  response: s.WalledGardenStatus,
  successStatus: 200,
  handler: (ctx) => walledGardenStatus(ctx.database, ctx.principal.orgDid),
});

export const complianceOperations = [deploymentComplianceOp, walledGardenOp];
