import type { Db } from "../db/client";
import { countsFromRecords, type CapabilityCounts } from "./capabilityUsage";

/**
 * Per capability, the calls let through and refused under `delegationIds` since `since`.
 */
export async function delegationCounts(
  db: Db,
  orgDid: string,
  delegationIds: string[],
  since: Date,
): Promise<CapabilityCounts> {
  return countsFromRecords(db, orgDid, delegationIds, since);
}
