import type { Db } from "../db/client";
import { processWide } from "../processWide";

/** The kinds of change a learning proposal can make (api-contract.md, "Learning proposals"). */
export const LEARNING_KINDS = [
  "prompt_recommended_model",
  "prompt_active_version",
  "routing_rule",
  "delegation_narrowing",
] as const;
export type LearningKind = (typeof LEARNING_KINDS)[number];

/** A target's state, as a proposal records it in `proposed` and `previous`: plain JSON. */
export type LearningState = Record<string, unknown>;

/**
 * What a learning proposal of one kind changes, owned by the area that holds the thing changed:
 * a prompt's recommended model and active version (server/prompts/), a routing rule
 * (server/reasoning/). The learning area (server/learning/) calls these, always in the caller's
 * transaction; it never writes another area's tables itself.
 */
export interface LearningApplier {
  kind: LearningKind;
  /**
   * Checks that `target` exists in `orgDid` and that `proposed` is a state it can take; throws a
   * 400 problem (with `errors[]` naming JSON pointers) when not, a 404 when the target is unknown.
   */
  validate(db: Db, orgDid: string, target: string, proposed: LearningState): Promise<void>;
  /** The target's state now: what `apply` replaces, stored as the proposal's `previous`. */
  current(db: Db, orgDid: string, target: string): Promise<LearningState>;
  /**
   * Sets the target's state: the proposal's `proposed` on apply, its `previous` on rollback (which
   * must then restore the earlier state exactly). Records whatever history the area keeps, with
   * `by` as the actor.
   */
  apply(
    db: Db,
    orgDid: string,
    target: string,
    state: LearningState,
    by: { actorDid: string; proposalId: string; action: "apply" | "rollback" },
  ): Promise<void>;
}

// Shared by every copy of this module in the process (Next.js bundles its own).
const appliers = processWide("learning.appliers", () => new Map<LearningKind, LearningApplier>());

/** Registers an applier (server/areas.ts does, from each area's `learningAppliers`). */
export function registerLearningApplier(applier: LearningApplier): void {
  appliers.set(applier.kind, applier);
}

/** The applier of `kind`, if its area is composed. */
export function learningApplier(kind: LearningKind): LearningApplier | undefined {
  return appliers.get(kind);
}
