import type { Db } from "../db/client";
import type { FieldError } from "../errors";
import { delegationCounts } from "../identity/usageRollup";
import {
  AFFINITY_WINDOW_PREFIX,
  DELEGATION_USAGE_PREFIX,
  parseAffinityWindow,
  parseDelegationUsage,
  PROVENANCE_ID,
} from "./schemas";

/**
 * Checks that each evidence reference names something real in `orgDid`: a provenance record of
 * the organization, or a statistics window in which the organization recorded reasoning calls of
 * the prompt on the model. Returns one field error per reference that does not (empty when all resolve).
 */
export async function resolveEvidence(db: Db, orgDid: string, refs: readonly string[]): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const field = (i: number) => `explain.evidence_refs.${i}`;
  const recordIds = refs.filter((r) => PROVENANCE_ID.test(r));
  const found = recordIds.length
    ? new Set(
        (
          await db.provenanceRecord.findMany({
            where: { id: { in: recordIds }, orgDid },
            select: { id: true },
          })
        ).map((r) => r.id),
      )
    : new Set<string>();
  for (const [i, ref] of refs.entries()) {
    if (PROVENANCE_ID.test(ref)) {
      if (!found.has(ref))
        errors.push({
          field: field(i),
          code: "UNRESOLVED_EVIDENCE",
          message: `No provenance record ${ref} in your organization.`,
        });
      continue;
    }
    const usage = parseDelegationUsage(ref);
    if (typeof usage === "string") {
      errors.push({ field: field(i), code: "INVALID_FORMAT", message: `A delegation usage window ${usage}.` });
      continue;
    }
    if (usage !== undefined) {
      const found = await db.delegation.findFirst({ where: { id: usage.delegation_id, orgDid }, select: { id: true } });
      const counts = await delegationCounts(db, orgDid, found ? [found.id] : [], usage.from);
      if (![...counts.values()].some((c) => c.calls + c.refused > 0))
        errors.push({
          field: field(i),
          code: "UNRESOLVED_EVIDENCE",
          message: `No call of delegation ${usage.delegation_id} in your organization since ${usage.from.toISOString()}.`,
        });
      continue;
    }
    const window = parseAffinityWindow(ref);
    if (window === undefined) {
      errors.push({
        field: field(i),
        code: "INVALID_FORMAT",
        message: `Not a provenance record id (prv_…) nor a statistics window (${AFFINITY_WINDOW_PREFIX}…, ${DELEGATION_USAGE_PREFIX}…).`,
      });
    } else if (typeof window === "string") {
      errors.push({ field: field(i), code: "INVALID_FORMAT", message: `A statistics window ${window}.` });
    } else {
      const calls = await db.reasoningCall.count({
        where: {
          orgDid,
          promptKey: window.prompt_key,
          model: window.model_id,
          createdAt: { gte: window.from, lt: window.to },
        },
      });
      if (calls === 0)
        errors.push({
          field: field(i),
          code: "UNRESOLVED_EVIDENCE",
          message: `No recorded reasoning call of ${window.model_id} for ${window.prompt_key} in that window.`,
        });
    }
  }
  return errors;
}
