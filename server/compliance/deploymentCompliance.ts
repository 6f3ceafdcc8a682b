import { createHmac } from "node:crypto";
import { rootOrgDidOf } from "../setup/rootOrg";
import canonicalize from "canonicalize";
import type { z } from "zod";
import type { Database } from "../db/client";
import { ATTESTATION_FORMATS_ACCEPTED, USER_VERIFICATION_REQUIRED } from "../identity/webauthnPolicy";
import { keyRing } from "../keys/signingKeys";
import { ledgerSync } from "../ledger/proofs";
import type { DeploymentComplianceResponse } from "./schemas";

export const COMPLIANCE_PROTOCOL_VERSION = "svc-compliance/1";

/**
 * The key of the compliance signature: SVC_COMPLIANCE_KEY when set (share it with your auditor),
 * else HMAC-SHA256(service secret, "svc compliance signature v1"), which only the operator holds.
 */
export async function complianceKey(): Promise<Buffer> {
  if (process.env.SVC_COMPLIANCE_KEY) return Buffer.from(process.env.SVC_COMPLIANCE_KEY, "utf8");
  return createHmac("sha256", (await keyRing()).secret)
    .update("svc compliance signature v1")
    .digest();
}

/** HMAC-SHA256 (hex) of the RFC 8785 canonical JSON of the report less its `signature`. */
export function signCompliance(report: Record<string, unknown>, key: Buffer): string {
  const { signature: _omit, ...rest } = report;
  return createHmac("sha256", key).update(canonicalize(rest)!).digest("hex");
}

/**
 * The deployment's compliance report, computed from the database at the time of the call:
 * passport counts, the ledger's sync with its newest checkpoint, and the invariants checked
 * against stored state where state can contradict them.
 */
export async function deploymentCompliance(
  db: Database,
  orgDid: string,
): Promise<z.input<typeof DeploymentComplianceResponse>> {
  const rootDid = await rootOrgDidOf(db);
  // The operator (root organization) sees the deployment's counts; a tenant sees its own.
  const scope = rootDid === orgDid ? {} : { orgDid };
  const passportCount = await db.read.passport.count({ where: scope });
  const verificationCount = await db.read.passport.count({ where: { ...scope, verificationTier: { gte: 1 } } });
  // A stored public key with a private part would contradict "no private key access". Prisma has
  // no JSON-key filter on SQLite, so this one count is SQL, one statement per engine.
  const [{ n: privateParts }] = (await db.read.$queryRawUnsafe<{ n: number | bigint }[]>(
    db.engine === "postgresql"
      ? `SELECT COUNT(*)::int AS "n" FROM "passport" WHERE "public_key_jwk" ? 'd'`
      : `SELECT COUNT(*) AS "n" FROM "passport" WHERE json_extract("public_key_jwk", '$.d') IS NOT NULL`,
  )) as [{ n: number | bigint }];
  // Every human passport must stand on a WebAuthn credential; one without would contradict the invariant.
  const humansWithoutPasskey = await db.read.passport.count({ where: { type: "human", passkeys: { none: {} } } });
  const { status, ...ledger } = await ledgerSync(db);
  const now = new Date();
  const report = {
    deployment_id: (rootDid ?? "unknown").replace(/^did:svc:/, ""),
    protocol_version: COMPLIANCE_PROTOCOL_VERSION,
    compliance: {
      human_passport_minting: "device_only" as const,
      attestation_formats_accepted: [...ATTESTATION_FORMATS_ACCEPTED],
      ledger_sync_status: status,
      passport_count: passportCount,
      verification_count: verificationCount,
      last_compliance_check: now.toISOString(),
      ledger,
    },
    invariants: {
      // No code path generates a passport key: passports are registered from public keys only.
      server_side_key_generation: false,
      private_key_access: Number(privateParts) > 0,
      biometric_binding_hash_used: false,
      // No API creates a human passport: only the console's WebAuthn registration (user verification required) does.
      webauthn_required_for_humans: USER_VERIFICATION_REQUIRED && humansWithoutPasskey === 0,
    },
  };
  return { ...report, signature: signCompliance(report, await complianceKey()) };
}
