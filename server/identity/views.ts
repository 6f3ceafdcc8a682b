import type { z } from "zod";
import type {
  Delegation as DelegationRow,
  Passport as PassportRow,
  Revocation as RevocationRow,
} from "../db/generated/sqlite/client";
import type { Delegation, DelegationKind, Passport, RevocationRecord } from "./schemas";

/** API shapes of identity rows: the one place that maps columns to the contract's field names. */
export function passportView(
  p: Pick<
    PassportRow,
    | "did"
    | "type"
    | "name"
    | "description"
    | "orgDid"
    | "verificationTier"
    | "identityTier"
    | "publicKeyJwk"
    | "createdAt"
  >,
): z.input<typeof Passport> {
  return {
    did: p.did,
    type: p.type as "agent" | "organization" | "human",
    name: p.name,
    description: p.description,
    org_did: p.orgDid,
    verification_tier: p.verificationTier,
    identity_tier: p.identityTier,
    public_key_jwk: p.publicKeyJwk as Record<string, unknown>,
    created_at: p.createdAt.toISOString(),
  };
}

export function delegationStatus(
  d: Pick<DelegationRow, "revokedAt" | "expiresAt">,
  now = Date.now(),
): "active" | "expired" | "revoked" {
  if (d.revokedAt) return "revoked";
  return d.expiresAt.getTime() <= now ? "expired" : "active";
}

export function delegationView(d: DelegationRow): z.input<typeof Delegation> {
  return {
    id: d.id,
    org_did: d.orgDid,
    kind: d.kind as z.infer<typeof DelegationKind>,
    name: d.name,
    grantor_did: d.grantorDid,
    delegate_did: d.delegateDid,
    parent_id: d.parentId,
    capabilities: d.capabilities as string[],
    environment: d.environment,
    risk_level: d.riskLevel,
    status: delegationStatus(d),
    created_at: d.createdAt.toISOString(),
    expires_at: d.expiresAt.toISOString(),
    revoked_at: d.revokedAt?.toISOString() ?? null,
  };
}

export function revocationView(r: RevocationRow): z.input<typeof RevocationRecord> {
  return {
    id: r.id,
    delegation_id: r.delegationId,
    revoked_by: r.revokedBy,
    revoked_at: r.revokedAt.toISOString(),
    reason: r.reason,
    metadata: (r.metadata as Record<string, unknown> | null) ?? null,
  };
}
