import type { Database, Db } from "../db/client";
import { newId } from "../ids";
import { appendInTransaction, type PendingRecord } from "./appendProvenance";
import type { ProvenanceEntry, ProvenanceRecord } from "./record";

/**
 * A record svc writes on its own, outside any governed call (an approval's expiry, a platform
 * event, a run's end, a delivery, a learning proposal, a key rotation). Who acted is not the
 * writer's to choose: `actingFor` says under which delegation, if any, and `serviceActor` derives
 * the actor from it.
 */
export interface ServiceRecord extends Omit<ProvenanceEntry, "actor_did" | "delegation_id" | "request_id"> {
  /**
   * The delegation svc acts under (a run's own, the one that created a webhook), with its delegate
   * as read in the same transaction; absent when svc acts for the organization alone.
   */
  actingFor?: { delegationId: string; delegateDid: string | null | undefined } | null;
  /** The id the record is filed under (a run's id, a delivery's message id); a new `req_` id otherwise. */
  request_id?: string;
}

/**
 * The one rule for who the service acts as. Under a delegation, its delegate: the record then
 * reads like any call the gate records under that delegation (actor = delegate). Otherwise, and
 * when the delegation is gone, the organization it serves: its DID is the actor, never null, since
 * a null actor is the ledger's mark of a caller nobody authenticated (the gate's anonymous
 * refusals), and the provenance explorer filters and names service records by that DID.
 */
export function serviceActor(orgDid: string, actingFor?: ServiceRecord["actingFor"]): string {
  return actingFor?.delegateDid ?? orgDid;
}

/** The ledger entry of a service record, its actor by the one rule. */
export function serviceEntry({ actingFor, request_id, ...rest }: ServiceRecord): ProvenanceEntry {
  return {
    ...rest,
    actor_did: serviceActor(rest.org_did, actingFor),
    delegation_id: actingFor?.delegationId ?? null,
    request_id: request_id ?? newId("req"),
  };
}

/**
 * Appends a service record inside the caller's transaction, so it commits with the service's own
 * writes or not at all (under `id` when the caller already points a row at it).
 */
export function appendServiceRecord(
  tx: Db,
  engine: Database["engine"],
  record: ServiceRecord,
  id?: string,
): Promise<PendingRecord> {
  return appendInTransaction(tx, engine, serviceEntry(record), id);
}
