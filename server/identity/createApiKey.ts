import type { z } from "zod";
import type { Database, Db } from "../db/client";
import { Forbidden, NotFound, ValidationFailed } from "../errors";
import { awaitIntegrated } from "../ledger/integrate";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { delegationPrincipal } from "./authenticate";
import type { Principal } from "../governance/principal";
import { missingCapabilities } from "./capabilities";
import { isKnownCapability } from "./capabilityCatalogue";
import { issueDelegation, sessionResponse } from "./issueDelegation";
import { requirePasskeyToMint } from "./passkeyStepUp";
import type { CreateApiKeyRequest } from "./schemas";

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
  const unknown = req.capabilities.filter((c) => !isKnownCapability(c));
  if (unknown.length > 0) {
    throw ValidationFailed(
      unknown.map((c) => ({
        field: "capabilities",
        code: "UNKNOWN_CAPABILITY",
        message: `Unknown capability ${JSON.stringify(c)}: not in the capability catalogue of this service.`,
      })),
      `Unknown capability: ${unknown.join(", ")}.`,
    );
  }
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
  const created = await db.writeTx(async (tx) => {
    const issued = await issueDelegation(tx, operator, {
      delegateDid: org.orgDid,
      capabilities: req.capabilities,
      durationSeconds: req.durationSeconds,
      kind: "api_key",
      name: req.name ?? null,
    });
    const record = await appendServiceRecord(tx, db.engine, {
      org_did: org.orgDid,
      grantor_did: org.orgDid,
      capability: "svc_api:delegations:write",
      operation: "CLI keys create",
      resource_type: "delegation",
      resource_id: issued.row.id,
      decision: "allowed",
      status: 201,
      request_hash: requestHash({ org_did: req.orgDid, capabilities: req.capabilities, name: req.name ?? null }),
    });
    return {
      recordId: record.id,
      key: {
        token: issued.token,
        delegation_id: issued.row.id,
        org_did: org.orgDid,
        capabilities: req.capabilities,
        expires_at: issued.row.expiresAt.toISOString(),
      },
    };
  });
  // Like a governed call, the CLI answers once its record has its position in the ledger.
  await awaitIntegrated(db, [created.recordId]);
  return created.key;
}

/**
 * An API key created by a signed-in person in the console: a key of the organization, derived
 * from the person's standing grant (the session's parent), never a root grant of its own.
 *
 * Why the parent and not the session: a session lasts hours and ends at sign-out, so a key derived
 * from it would die with it. The standing grant is the person's authority in the organization,
 * and an ancestor of the caller's session: a key derived from it is bounded by its lifetime,
 * holds at most its (and the session's) capabilities, and is revoked with it when the person is.
 * A session with no parent (one started before standing grants existed) derives the key from itself.
 *
 * A key that can decide approvals needs a fresh passkey assertion in this session, and every key
 * records the person who minted it (`mintedByDid`): what it decides counts as theirs.
 */
export async function createConsoleApiKey(db: Db, session: Principal, req: z.output<typeof CreateApiKeyRequest>) {
  const capabilities = [...new Set(req.capabilities)];
  const missing = missingCapabilities(session.capabilities, capabilities);
  if (missing.length > 0)
    throw Forbidden(`A key can only hold capabilities you hold; yours do not cover ${missing.join(", ")}.`, {
      missing_capabilities: missing,
    });
  await requirePasskeyToMint(db, session, capabilities);
  const parentId = session.chain.length >= 2 ? session.chain[session.chain.length - 2]! : session.delegationId;
  const grantor = parentId === session.delegationId ? session : await delegationPrincipal(db, parentId);
  const issued = await issueDelegation(db, grantor, {
    delegateDid: session.orgDid,
    capabilities,
    durationSeconds: req.days * 86_400,
    kind: "api_key",
    name: req.name,
    mintedByDid: session.actorDid,
  });
  return { ...sessionResponse(issued), name: req.name };
}
