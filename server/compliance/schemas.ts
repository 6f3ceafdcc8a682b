import { z } from "zod";
import { EXAMPLE } from "../openapi/examples";

export const DeploymentComplianceResponse = z
  .object({
    deployment_id: z.string(),
    protocol_version: z.string(),
    compliance: z.object({
      human_passport_minting: z.literal("device_only"),
      attestation_formats_accepted: z
        .array(z.string())
        .describe("WebAuthn attestation formats the console's registration accepts"),
      ledger_sync_status: z
        .string()
        .describe("in_sync when the newest checkpoint covers every record; behind otherwise"),
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
    signature: z
      .string()
      .describe(
        "HMAC-SHA256 (hex) of the RFC 8785 canonical JSON of this object less `signature`; see README, Compliance",
      ),
  })
  .meta({
    id: "DeploymentComplianceResponse",
    example: {
      deployment_id: EXAMPLE.rootOrgDid.replace(/^did:svc:/, ""),
      protocol_version: "svc-compliance/1",
      compliance: {
        human_passport_minting: "device_only",
        attestation_formats_accepted: ["packed", "tpm", "android-key", "apple", "fido-u2f", "none"],
        ledger_sync_status: "in_sync",
        passport_count: 12,
        verification_count: 4,
        last_compliance_check: EXAMPLE.createdAt,
        ledger: { record_count: 1042, checkpoint_tree_size: 1042, records_behind: 0, checkpoint_age_seconds: 0.4 },
      },
      invariants: {
        server_side_key_generation: false,
        private_key_access: false,
        biometric_binding_hash_used: false,
        webauthn_required_for_humans: true,
      },
      signature: "5b1f0c3e9a7d2468ace013579bdf2468ace013579bdf2468ace013579bdf2468",
    },
  });

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
    witnesses: z
      .array(z.object({ name: z.string(), url: z.string(), last_cosignature: Cosignature.nullable() }))
      .describe("Configured witnesses and their latest cosignature"),
  })
  .meta({
    id: "WalledGardenStatus",
    example: {
      network_verification: "local_only",
      explanation:
        "No witness is configured (SVC_WITNESSES), so the ledger's 1042 checkpointed records are vouched for only by this service's own signature. An auditor can check that records match the signed checkpoints, but not that the operator shows everyone the same checkpoints.",
      mitigations: [
        "Every checkpoint is signed with the service's Ed25519 key; `npx svc verify` checks exports, checkpoints and proofs offline with only the public verifier key.",
      ],
      risks: {
        walled_garden_possible: true,
        blast_radius:
          "The whole ledger (1042 checkpointed records): an operator with database and key access could present a rewritten history to an auditor who holds no earlier checkpoint.",
        risk_acceptance:
          "Accepted only while auditors keep their own copies of checkpoints; configure witnesses to remove it.",
      },
      recommendations: [
        "Configure at least one independent witness in SVC_WITNESSES (<witness verifier key>@<url>) so that checkpoints are cosigned outside this deployment.",
      ],
      witnesses: [],
    },
  });
