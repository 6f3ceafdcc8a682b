import { agentOperations } from "../agents/operations";
import { complianceOperations } from "../compliance/operations";
import { executionOperations } from "../executions/operations";
import { eventOperations } from "../events/operations";
import { controlPlaneOperations } from "../controlPlane/operations";
import { identityOperations } from "../identity/operations";
import { provenanceOperations } from "../provenance/operations";
import { webhookOperations } from "../webhooks/operations";
import type { Operation } from "./operation";

/** Every governed /v1 operation: the OpenAPI document and the route tests are built from this list. */
export const operations: Operation[] = [...identityOperations, ...controlPlaneOperations, ...provenanceOperations, ...complianceOperations, ...agentOperations, ...executionOperations, ...webhookOperations, ...eventOperations] as unknown as Operation[];
