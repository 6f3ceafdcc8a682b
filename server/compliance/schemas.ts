import { z } from "zod";

export const DeploymentComplianceResponse = z
  .object({
    deployment_id: z.string(),
    protocol_version: z.string(),
    compliance: z.object({
      human_passport_minting: z.literal("device_only"),
      attestation_formats_accepted: z.array(z.string()).describe("WebAuthn attestation formats the console's registration accepts"),
      ledger_sync_status: z.string().describe("in_sync when the newest checkpoint covers every record; behind otherwise"),
      passport_count: z.number().int(),
      verification_count: z.number().int().describe("Passports with a verification tier of at least 1"),
      last_compliance_check: z.string(),
      ledger: z
        .object({
          record_count: z.number().int(),
          checkpoint_tree_size: z.number().int(),
          records_behind: z.number().int(),
          checkpoint_age_seconds: z.number().nullable(),
        })
        .describe("The figures behind ledger_sync_status"),
    }),
    invariants: z.object({
      server_side_key_generation: z.boolean(),
      private_key_access: z.boolean(),
      biometric_binding_hash_used: z.boolean(),
      webauthn_required_for_humans: z.boolean(),
    }),
    signature: z.string().describe("HMAC-SHA256 (hex) of the RFC 8785 canonical JSON of this object less `signature`; see README, Compliance"),
  })
  .meta({ id: "DeploymentComplianceResponse" });

export const Cosignature = z.object({
  witness: z.string(),
  tree_size: z.number().int(),
  signed_at: z.string(),
  line: z.string().describe("The cosignature line exactly as the witness returned it"),
});

export const WalledGardenStatus = z
  .object({
    network_verification: z.enum(["local_only", "network_verified"]),
    explanation: z.string(),
    mitigations: z.array(z.string()),
    risks: z.object({ walled_garden_possible: z.boolean(), blast_radius: z.string(), risk_acceptance: z.string() }),
    recommendations: z.array(z.string()),
    witnesses: z.array(z.object({ name: z.string(), url: z.string(), last_cosignature: Cosignature.nullable() })).describe("Configured witnesses and their latest cosignature"),
  })
  .meta({ id: "WalledGardenStatus" });
