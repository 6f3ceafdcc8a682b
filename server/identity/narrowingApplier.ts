import type { Db } from "../db/client";
import { ValidationFailed, type FieldError } from "../errors";
import { CAPABILITY_PATTERN, missingCapabilities } from "./capabilities";
import { isKnownCapability } from "./capabilityCatalogue";
import { narrowDelegation, restoreNarrowing } from "./narrowDelegation";
import { NotFound } from "../errors";

/** A target's state as learning proposals hold it (server/learning/appliers.ts, which the kernel does not import). */
type LearningState = Record<string, unknown>;

/** The most capabilities a narrowed grant may list (as a delegation token's request). */
const MAX_CAPABILITIES = 100;

async function findTarget(db: Db, orgDid: string, target: string) {
  const row = await db.delegation.findFirst({
    where: { id: target, orgDid },
    select: { capabilities: true, revokedAt: true, expiresAt: true },
  });
  if (!row) throw NotFound("delegation", target);
  return row;
}

function capabilitiesOf(state: LearningState): string[] {
  const errors: FieldError[] = Object.keys(state)
    .filter((k) => k !== "capabilities")
    .map((k) => ({ field: `/${k}`, code: "UNKNOWN_FIELD", message: `Unknown field ${JSON.stringify(k)}.` }));
  const caps = state.capabilities;
  if (!Array.isArray(caps)) {
    errors.push({
      field: "/capabilities",
      code: caps === undefined ? "REQUIRED_FIELD_MISSING" : "INVALID_TYPE",
      message: "A list of capabilities.",
    });
    throw ValidationFailed(errors);
  }
  if (caps.length === 0 || caps.length > MAX_CAPABILITIES)
    errors.push({
      field: "/capabilities",
      code: "OUT_OF_RANGE",
      message: `1 to ${MAX_CAPABILITIES} capabilities (revoke a delegation to take everything away).`,
    });
  caps.forEach((c, i) => {
    if (typeof c !== "string" || !CAPABILITY_PATTERN.test(c) || !isKnownCapability(c))
      errors.push({ field: `/capabilities/${i}`, code: "INVALID_FORMAT", message: "A capability of the catalogue." });
  });
  if (errors.length) throw ValidationFailed(errors);
  return [...new Set(caps as string[])];
}

/**
 * Learning proposals of kind `delegation_narrowing` (the target is a delegation id, the state
 * `{capabilities}`): narrowing a key or a run's grant to what it really uses. Only ever a subset of
 * what it holds; applying narrows it in place and cascades to derived delegations, rollback
 * restores them all exactly (narrowDelegation.ts). The shape of a learning applier
 * (server/learning/appliers.ts): the composition root registers it with the identity area.
 */
export const delegationNarrowingApplier = {
  kind: "delegation_narrowing" as const,
  async validate(db: Db, orgDid: string, target: string, proposed: LearningState) {
    const row = await findTarget(db, orgDid, target);
    const capabilities = capabilitiesOf(proposed);
    if (row.revokedAt || row.expiresAt.getTime() <= Date.now())
      throw ValidationFailed([
        { field: "/target", code: "DELEGATION_INACTIVE", message: `Delegation ${target} is revoked or expired.` },
      ]);
    const wider = missingCapabilities(row.capabilities as string[], capabilities);
    if (wider.length > 0)
      throw ValidationFailed([
        {
          field: "/capabilities",
          code: "NOT_A_NARROWING",
          message: `A delegation can only narrow: ${target} does not hold ${wider.join(", ")}.`,
        },
      ]);
  },
  async current(db: Db, orgDid: string, target: string): Promise<LearningState> {
    return { capabilities: (await findTarget(db, orgDid, target)).capabilities as string[] };
  },
  async apply(
    db: Db,
    orgDid: string,
    target: string,
    state: LearningState,
    by: { actorDid: string; proposalId: string; action: "apply" | "rollback" },
  ) {
    const capabilities = capabilitiesOf(state);
    const who = { actorDid: by.actorDid, proposalId: by.proposalId };
    if (by.action === "apply") await narrowDelegation(db, orgDid, target, capabilities, who);
    else await restoreNarrowing(db, orgDid, target, capabilities, who);
  },
};
