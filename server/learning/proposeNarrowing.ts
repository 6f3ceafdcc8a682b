import type { Database } from "../db/client";
import { forEngine, sqliteTimestamp } from "../db/raw";
import { servicePrincipal } from "../events/platformEvents";
import { usageRows } from "../identity/capabilityUsage";
import { delegationCounts } from "../identity/usageRollup";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { learningApplier } from "./appliers";
import { createProposal } from "./createProposal";
import { linkProposalRecord } from "./linkProposalRecord";
import { settingNumber } from "./proposeFromAffinity";
import { delegationUsageRef } from "./schemas";

/** The thresholds of the worker's narrowing proposals (README, "Least privilege"). */
export interface NarrowingSettings {
  /** How long a held capability must have gone unused (SVC_NARROWING_WINDOW_DAYS, default 30). */
  windowMs: number;
  /** …by a grant that made at least this many calls in that window (SVC_NARROWING_MIN_CALLS, default 50). */
  minCalls: number;
}

export function narrowingSettings(): NarrowingSettings {
  return {
    windowMs: settingNumber("SVC_NARROWING_WINDOW_DAYS", 30) * 86_400_000,
    minCalls: Math.max(1, Math.floor(settingNumber("SVC_NARROWING_MIN_CALLS", 50))),
  };
}

/** Grants worth narrowing: keys and tokens people hold, and agents' trigger grants; not sessions or single runs. */
const NARROWABLE_KINDS = ["api_key", "delegation_token", "trigger"];
const OPEN = ["pending", "approved"];
const at = (engine: Database["engine"], d: Date) => (engine === "sqlite" ? sqliteTimestamp(d) : d);
/** Candidates looked at per sweep and organization, busiest first. */
const MAX_CANDIDATES = 500;

/**
 * The worker's least-privilege proposals: for each live key, token or agent trigger grant that
 * existed through the whole window, made at least `minCalls` calls in it (its derived delegations'
 * included, from the usage rollup) and holds capabilities nothing was let through under, a
 * `delegation_narrowing` proposal to the capabilities it used. Its evidence is the usage window and
 * the replay of the window's calls against the narrower grant (which refuses none of them, by
 * construction); confidence grows with the calls seen, n / (n + minCalls). A target with an open
 * proposal (pending or approved) gets none. Each proposal is its own transaction with a provenance
 * record whose actor is the organization. Returns how many it made.
 */
export async function proposeNarrowing(
  db: Database,
  settings: NarrowingSettings = narrowingSettings(),
  now = new Date(),
): Promise<number> {
  const applier = learningApplier("delegation_narrowing");
  if (!applier) return 0;
  const since = new Date(now.getTime() - settings.windowMs);
  // Live grants of those kinds that made calls in the window (the rollup counts a record for its
  // delegation's ancestors too: a key whose sessions were busy is among them), with no open
  // proposal (checked again in each proposal's transaction).
  const candidates = await db.read.$queryRawUnsafe<{ id: string; org_did: string }[]>(
    ...forEngine(
      db.engine,
      `SELECT d."id", d."org_did" FROM "delegation" d
        WHERE d."kind" IN (${NARROWABLE_KINDS.map((k) => `'${k}'`).join(", ")}) AND d."revoked_at" IS NULL
          AND d."expires_at" > $1 AND d."created_at" <= $2
          AND EXISTS (SELECT 1 FROM "delegation_usage_rollup" r WHERE r."org_did" = d."org_did" AND r."delegation_id" = d."id" AND r."day" >= $3)
          AND NOT EXISTS (SELECT 1 FROM "learning_proposal" l WHERE l."org_did" = d."org_did" AND l."kind" = 'delegation_narrowing' AND l."target" = d."id" AND l."approval_state" IN ('pending', 'approved'))
        ORDER BY d."id" LIMIT ${MAX_CANDIDATES}`,
      [at(db.engine, now), at(db.engine, since), since.toISOString().slice(0, 10)],
    ),
  );
  let made = 0;
  for (const { id, org_did: orgDid } of candidates) {
    const d = { id, orgDid };
    made += await db.writeTx(async (tx) => {
      const open = await tx.learningProposal.count({
        where: { orgDid: d.orgDid, kind: "delegation_narrowing", target: d.id, approvalState: { in: OPEN } },
      });
      if (open > 0) return 0;
      const held = (await applier.current(tx, d.orgDid, d.id)).capabilities as string[];
      const counts = await delegationCounts(tx, d.orgDid, [d.id], since);
      const calls = [...counts.values()].reduce((n, c) => n + c.calls, 0);
      if (calls < settings.minCalls) return 0;
      const { unused } = usageRows(held, counts);
      const kept = held.filter((h) => !unused.includes(h));
      if (unused.length === 0 || kept.length === 0) return 0;
      const proposal = await createProposal(
        tx,
        servicePrincipal(d.orgDid),
        {
          kind: "delegation_narrowing",
          target: d.id,
          proposed: { capabilities: kept },
          explain: {
            source: "inferred",
            scope: `delegation:${d.id}`,
            confidence: Math.round((calls / (calls + settings.minCalls)) * 1000) / 1000,
            evidence_refs: [delegationUsageRef(d.id, since, now), delegationUsageRef(d.id, since, now, kept)],
            rollback_target:
              `the ${held.length} capabilities it holds (${unused.length} unused in ${Math.round(settings.windowMs / 86_400_000)} days over ${calls} calls)`.slice(
                0,
                300,
              ),
          },
        },
        { origin: "worker", now },
      );
      const record = await appendServiceRecord(tx, db.engine, {
        org_did: d.orgDid,
        grantor_did: null,
        capability: null,
        operation: "LEARNING_PROPOSE narrowing",
        resource_type: "learning_proposal",
        resource_id: proposal.id,
        decision: "allowed",
        status: 201,
        request_hash: requestHash({ kind: proposal.kind, target: d.id, proposed: proposal.proposed }),
      });
      await linkProposalRecord(tx, proposal, record.id);
      return 1;
    });
  }
  return made;
}
