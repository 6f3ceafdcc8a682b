import { z } from "zod";
import { PaginationInfo } from "../http/cursor";
import { EXAMPLE } from "../openapi/examples";

const Timestamp = z.string().describe("ISO 8601 date-time");

export const ProvenanceRecordSchema = z
  .object({
    id: z.string(),
    seq: z.number().int().describe("Leaf index in the ledger's Merkle tree"),
    timestamp: Timestamp,
    org_did: z.string(),
    actor_did: z.string().nullable().describe("Who acted"),
    delegation_id: z.string().nullable(),
    grantor_did: z.string().nullable().describe("Who allowed it"),
    capability: z.string().nullable().describe("The capability checked"),
    operation: z.string().describe("Method and route template, e.g. GET /v1/passports/{did}"),
    resource_type: z.string().nullable(),
    resource_id: z.string().nullable(),
    decision: z.enum(["allowed", "denied"]),
    status: z.number().int().describe("HTTP status of the answer"),
    request_hash: z.string().describe("SHA-256 (hex) of the canonical request body"),
    request_id: z.string(),
    trace_id: z
      .string()
      .optional()
      .describe(
        "The OpenTelemetry trace (32 hex digits) the call ran in, when svc was exporting traces; absent otherwise. Part of the leaf bytes when present",
      ),
    leaf_hash: z.string().describe("base64 SHA-256(0x00 ‖ RFC 8785 canonical JSON of this record less leaf_hash)"),
  })
  .meta({
    id: "ProvenanceRecord",
    example: {
      id: EXAMPLE.recordId,
      seq: 1041,
      timestamp: EXAMPLE.createdAt,
      org_did: EXAMPLE.rootOrgDid,
      actor_did: EXAMPLE.agentDid,
      delegation_id: EXAMPLE.delegationId,
      grantor_did: EXAMPLE.rootOrgDid,
      capability: "svc_api:passports:read",
      operation: "GET /v1/passports/{did}",
      resource_type: "passport",
      resource_id: EXAMPLE.agentDid,
      decision: "allowed",
      status: 200,
      request_hash: EXAMPLE.requestHash,
      request_id: EXAMPLE.requestId,
      leaf_hash: EXAMPLE.leafHash,
    },
  });

export const ProvenanceListQuery = z.object({
  actor: z.string().max(512).optional().describe("actor_did"),
  delegation: z.string().max(100).optional().describe("delegation_id"),
  grantor: z.string().max(512).optional().describe("grantor_did"),
  resource: z.string().max(512).optional().describe("resource_id"),
  resource_type: z.string().max(100).optional(),
  decision: z.enum(["allowed", "denied"]).optional(),
  operation: z
    .string()
    .max(200)
    .optional()
    .describe("Operations starting with this, e.g. `POST /v1/passports`, `GET /v1/provenance` or `TRPC identity.`"),
  from: z.iso.datetime({ offset: true }).optional().describe("Records at or after this time"),
  to: z.iso.datetime({ offset: true }).optional().describe("Records before this time"),
  console_reads: z
    .enum(["include", "exclude"])
    .default("include")
    .describe(
      "`exclude` leaves out the console's own allowed reads (TRPC queries), which a console session makes on every page view; they stay recorded",
    ),
});

export const ProvenanceList = z.object({ data: z.array(ProvenanceRecordSchema), pagination: PaginationInfo }).meta({
  id: "ProvenanceList",
  example: {
    data: [
      {
        id: EXAMPLE.recordId,
        seq: 1041,
        timestamp: EXAMPLE.createdAt,
        org_did: EXAMPLE.rootOrgDid,
        actor_did: EXAMPLE.agentDid,
        delegation_id: EXAMPLE.delegationId,
        grantor_did: EXAMPLE.rootOrgDid,
        capability: "svc_api:passports:read",
        operation: "GET /v1/passports/{did}",
        resource_type: "passport",
        resource_id: EXAMPLE.agentDid,
        decision: "allowed",
        status: 200,
        request_hash: EXAMPLE.requestHash,
        request_id: EXAMPLE.requestId,
        leaf_hash: EXAMPLE.leafHash,
      },
    ],
    pagination: { has_more: true, next_cursor: EXAMPLE.nextCursor },
  },
});

export const ProofQuery = z.object({
  tree_size: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Prove against the checkpoint of this size (default: the latest)"),
});

export const InclusionProof = z
  .object({
    record_id: z.string(),
    leaf_index: z.number().int(),
    tree_size: z.number().int(),
    leaf_hash: z.string(),
    inclusion_path: z.array(z.string()).describe("base64 node hashes, RFC 9162 §2.1.3"),
    checkpoint: z.string().describe("The signed note of the checkpoint of tree_size"),
  })
  .meta({
    id: "InclusionProof",
    example: {
      record_id: EXAMPLE.recordId,
      leaf_index: 1041,
      tree_size: 1042,
      leaf_hash: EXAMPLE.leafHash,
      inclusion_path: [...EXAMPLE.nodeHashes],
      checkpoint: EXAMPLE.checkpoint,
    },
  });

export const ConsistencyQuery = z.object({
  from: z.coerce.number().int().min(1).describe("The older tree size"),
  to: z.coerce.number().int().min(1).describe("The newer tree size"),
});

export const ConsistencyProof = z
  .object({
    from_size: z.number().int(),
    to_size: z.number().int(),
    consistency_path: z.array(z.string()).describe("base64 node hashes, RFC 9162 §2.1.4"),
  })
  .meta({
    id: "ConsistencyProof",
    example: { from_size: 1000, to_size: 1042, consistency_path: [...EXAMPLE.nodeHashes] },
  });

export const ExportQuery = z.object({
  from: z.coerce.number().int().min(0).default(0).describe("First leaf index (inclusive)"),
  to: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Last leaf index (exclusive); default: the latest checkpoint's size"),
});

export const RecordIdParams = z.object({ id: z.string().min(1).max(100) });
