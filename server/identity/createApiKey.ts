import type { Database } from "../db/client";
import { NotFound } from "../errors";
import { appendInTransaction } from "../provenance/appendProvenance";
import { requestHash } from "../provenance/record";
import { newId } from "../ids";
import type { Principal } from "./authenticate";
import { issueDelegation } from "./issueDelegation";

export interface ApiKeyRequest {
  orgDid: string;
  capabilities: string[];
  name?: string | null;
  durationSeconds: number;
}

/**
 * The operator's way in: an API key (a long-lived delegation of an organization to itself)
 * minted from the command line, where no token exists yet. Recorded in the ledger like a call.
 */
export async function createApiKeyAsOperator(db: Database, req: ApiKeyRequest) {
  const org = await db.read.organization.findUnique({ where: { orgDid: req.orgDid } });
  if (!org) throw NotFound("organization", req.orgDid);
  const operator: Principal = {
    delegationId: "",
    orgDid: org.orgDid,
    actorDid: org.orgDid,
    grantorDid: org.orgDid,
    capabilities: ["svc_api:*", ...req.capabilities],
    environment: null,
    riskLevel: "standard",
    kind: "operator",
    expiresAt: new Date(Date.now() + req.durationSeconds * 1000 + 60_000),
    chain: [],
  };
  return db.writeTx(async (tx) => {
    const issued = await issueDelegation(tx, operator, {
      delegateDid: org.orgDid,
      capabilities: req.capabilities,
      durationSeconds: req.durationSeconds,
      kind: "api_key",
      name: req.name ?? null,
    });
    await appendInTransaction(tx, db.engine, {
      org_did: org.orgDid,
      actor_did: org.orgDid,
      delegation_id: null,
      grantor_did: org.orgDid,
      capability: "svc_api:delegations:write",
      operation: "CLI keys create",
      resource_type: "delegation",
      resource_id: issued.row.id,
      decision: "allowed",
      status: 201,
      request_hash: requestHash({ org_did: req.orgDid, capabilities: req.capabilities, name: req.name ?? null }),
      request_id: newId("req"),
    });
    return { token: issued.token, delegation_id: issued.row.id, org_did: org.orgDid, capabilities: req.capabilities, expires_at: issued.row.expiresAt.toISOString() };
  });
}
