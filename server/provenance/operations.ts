import { z } from "zod";
import { ListQuery } from "../http/cursor";
import { defineOperation } from "../http/operation";
import { exportRecords } from "../ledger/exportRecords";
import { ledgerIdentity } from "../ledger/origin";
import { settleLedger } from "../ledger/integrate";
import { consistencyProof, inclusionProof, latestCheckpoint } from "../ledger/proofs";
import { NoCheckpointYet } from "../errors";
import { EXAMPLE } from "../openapi/examples";
import { getProvenanceRecord, listProvenance } from "./records";
import * as s from "./schemas";

const tag = "Provenance";
const capability = "svc_api:provenance:read";

export const listProvenanceOp = defineOperation({
  id: "listProvenance",
  method: "GET",
  path: "/v1/provenance",
  tag,
  summary: "List provenance records",
  description:
    "The caller's organization's records, newest first, filtered by actor, delegation, grantor, resource, decision, operation and time range.",
  capability,
  resourceType: "provenance_record",
  query: ListQuery.extend(s.ProvenanceListQuery.shape),
  response: s.ProvenanceList,
  successStatus: 200,
  handler: async (ctx) => {
    await settleLedger(ctx.database);
    return listProvenance(ctx.db, ctx.principal, ctx.query, ctx.secret);
  },
});

export const checkpointOp = defineOperation({
  id: "getProvenanceCheckpoint",
  method: "GET",
  path: "/v1/provenance/checkpoint",
  tag,
  summary: "The latest signed checkpoint (C2SP tlog-checkpoint in a signed note)",
  capability,
  resourceType: "ledger_checkpoint",
  response: z.string().describe("text/plain signed note").meta({ example: EXAMPLE.checkpoint }),
  responseType: "text/plain",
  successStatus: 200,
  problems: ["no_checkpoint_yet"],
  async handler(ctx) {
    const cp = await latestCheckpoint(ctx.database);
    if (!cp) throw NoCheckpointYet();
    ctx.setResource(String(cp.treeSize));
    return new Response(cp.note, { headers: { "Content-Type": "text/plain; charset=utf-8" } });
  },
});

export const verifierKeyOp = defineOperation({
  id: "getProvenanceVerifierKey",
  method: "GET",
  path: "/v1/provenance/verifier-key",
  tag,
  summary: "The note verifier key of the checkpoints' signer (<name>+<key hash>+<base64 key>)",
  capability,
  resourceType: "ledger_key",
  response: z
    .string()
    .describe("text/plain verifier key")
    .meta({ example: `${EXAMPLE.verifierKey}\n` }),
  responseType: "text/plain",
  successStatus: 200,
  async handler(ctx) {
    return new Response(`${(await ledgerIdentity(ctx.database)).verifierKey}\n`, {
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  },
});

export const consistencyOp = defineOperation({
  id: "getProvenanceConsistency",
  method: "GET",
  path: "/v1/provenance/consistency",
  tag,
  summary: "Consistency proof between two tree sizes",
  capability,
  resourceType: "ledger_checkpoint",
  query: s.ConsistencyQuery,
  response: s.ConsistencyProof,
  successStatus: 200,
  problems: ["no_checkpoint_yet"],
  handler: (ctx) => consistencyProof(ctx.database, ctx.query.from, ctx.query.to),
});

export const exportOp = defineOperation({
  id: "exportProvenance",
  method: "GET",
  path: "/v1/provenance/export",
  tag,
  summary: "Stream records [from, to) as NDJSON",
  description:
    "One published record per line in leaf order; other organizations' records are redacted to {seq, leaf_hash, redacted}. Verify offline with `npx svc verify`.",
  capability,
  resourceType: "provenance_record",
  query: s.ExportQuery,
  response: z
    .string()
    .describe("application/x-ndjson")
    .meta({ example: `${JSON.stringify(s.ProvenanceRecordSchema.meta()?.example)}\n` }),
  responseType: "application/x-ndjson",
  successStatus: 200,
  handler: async (ctx) => {
    await settleLedger(ctx.database);
    return exportRecords(ctx.database, ctx.principal, ctx.query.from, ctx.query.to);
  },
});

export const getProvenanceOp = defineOperation({
  id: "getProvenance",
  method: "GET",
  path: "/v1/provenance/{id}",
  tag,
  summary: "Get a provenance record",
  capability,
  resourceType: "provenance_record",
  params: s.RecordIdParams,
  response: s.ProvenanceRecordSchema,
  successStatus: 200,
  handler: async (ctx) => {
    await settleLedger(ctx.database);
    return getProvenanceRecord(ctx.db, ctx.principal, ctx.params.id);
  },
});

export const proofOp = defineOperation({
  id: "getProvenanceProof",
  method: "GET",
  path: "/v1/provenance/{id}/proof",
  tag,
  summary: "Inclusion proof of a record against a checkpoint",
  capability,
  resourceType: "provenance_record",
  params: s.RecordIdParams,
  query: s.ProofQuery,
  response: s.InclusionProof,
  successStatus: 200,
  problems: ["no_checkpoint_yet", "not_yet_checkpointed"],
  handler: async (ctx) => {
    await settleLedger(ctx.database);
    return inclusionProof(ctx.database, ctx.principal, ctx.params.id, ctx.query.tree_size);
  },
});

export const provenanceOperations = [
  listProvenanceOp,
  checkpointOp,
  verifierKeyOp,
  consistencyOp,
  exportOp,
  getProvenanceOp,
  proofOp,
];
