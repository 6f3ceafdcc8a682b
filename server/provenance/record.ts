import { createHash, hash } from "node:crypto";
import canonicalize from "canonicalize";

/**
 * A provenance record exactly as `GET /v1/provenance/{id}` returns it. Its leaf bytes are the
 * RFC 8785 canonical JSON of this object less `leaf_hash`; `leaf_hash` is base64 of
 * SHA-256(0x00 ‖ leaf bytes), the RFC 9162 leaf hash.
 */
export interface ProvenanceRecord {
  id: string;
  seq: number;
  timestamp: string;
  org_did: string;
  actor_did: string | null;
  delegation_id: string | null;
  grantor_did: string | null;
  capability: string | null;
  operation: string;
  resource_type: string | null;
  resource_id: string | null;
  decision: "allowed" | "denied";
  status: number;
  request_hash: string;
  request_id: string;
  /**
   * The OpenTelemetry trace the call ran in, when it was traced; absent otherwise (never null), so
   * the leaf bytes of a record written untraced, or before traces existed, are what they were.
   */
  trace_id?: string;
  leaf_hash: string;
}

/** What a governed call knows about itself when it is recorded. */
export type ProvenanceEntry = Omit<ProvenanceRecord, "id" | "seq" | "timestamp" | "leaf_hash">;

/** The RFC 8785 canonical bytes of a record, less its `leaf_hash`. */
export function leafBytes(record: Omit<ProvenanceRecord, "leaf_hash"> | ProvenanceRecord): Buffer {
  const { leaf_hash: _ignored, ...rest } = record as ProvenanceRecord;
  return Buffer.from(canonicalize(rest)!, "utf8");
}

/** RFC 9162 §2.1.1 leaf hash: SHA-256(0x00 ‖ leaf bytes). */
export function hashLeaf(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(Uint8Array.of(0)).update(bytes).digest();
}

/** The bytes an interior node hashes, for two 32-byte children (filled and hashed synchronously, so one buffer serves a thread). */
const children = Buffer.alloc(65);

/**
 * RFC 9162 §2.1.1 interior node hash: SHA-256(0x01 ‖ left ‖ right). One-shot `crypto.hash` over
 * one buffer: 0.63 µs against createHash's 1.05 µs here, on what the tree builder runs ~3,000 times
 * a half-second round on a busy server (holding the write lock) and verification for every node.
 */
export function hashChildren(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== 32 || right.length !== 32)
    return hash("sha256", Buffer.concat([Uint8Array.of(1), left, right]), "buffer");
  children[0] = 1;
  children.set(left, 1);
  children.set(right, 33);
  return hash("sha256", children, "buffer");
}

/** Fixes a record's place in the ledger and computes its leaf hash. */
export function sealRecord(entry: ProvenanceEntry, id: string, seq: number, timestamp: Date): ProvenanceRecord {
  const unsealed = { id, seq, timestamp: timestamp.toISOString(), ...entry };
  return { ...unsealed, leaf_hash: hashLeaf(leafBytes(unsealed)).toString("base64") };
}

/** SHA-256 (hex) of a request body: its canonical JSON when it is JSON, its bytes otherwise. */
export function requestHash(body: unknown, rawBytes?: Uint8Array): string {
  const h = createHash("sha256");
  if (body !== undefined) h.update(canonicalize(body) ?? "");
  else if (rawBytes) h.update(rawBytes);
  return h.digest("hex");
}
