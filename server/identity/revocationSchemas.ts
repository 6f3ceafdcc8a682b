import { z } from "zod";
import { PaginationInfo } from "../http/listSchemas";
import { EXAMPLE } from "../openapi/examples";
import { Timestamp } from "./passportSchemas";

// Pure zod: revoking a delegation, and the revocation list.

export const RevokeRequest = z
  .object({
    reason: z.string().max(1000).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .meta({ id: "RevokeRequest", example: { reason: "Agent decommissioned", metadata: { ticket: "OPS-1432" } } });

export const RevocationRecord = z
  .object({
    id: z.string(),
    delegation_id: z.string(),
    revoked_by: z.string().describe("DID of the actor who revoked it"),
    revoked_at: Timestamp,
    reason: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({
    id: "RevocationRecord",
    example: {
      id: EXAMPLE.revocationId,
      delegation_id: EXAMPLE.delegationId,
      revoked_by: EXAMPLE.rootOrgDid,
      revoked_at: EXAMPLE.createdAt,
      reason: "Agent decommissioned",
      metadata: { ticket: "OPS-1432" },
    },
  });

export const RevocationList = z.object({ data: z.array(RevocationRecord), pagination: PaginationInfo }).meta({
  id: "RevocationList",
  example: {
    data: [
      {
        id: EXAMPLE.revocationId,
        delegation_id: EXAMPLE.delegationId,
        revoked_by: EXAMPLE.rootOrgDid,
        revoked_at: EXAMPLE.createdAt,
        reason: "Agent decommissioned",
        metadata: { ticket: "OPS-1432" },
      },
    ],
    pagination: { has_more: false, next_cursor: null },
  },
});
