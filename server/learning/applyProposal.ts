import type { Db } from "../db/client";
import type { LearningProposal as Row } from "../db/generated/sqlite/client";
import { Conflict, domainError } from "../errors";
import { putPlatformEvent } from "../events/platformEvents";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { learningApplier, type LearningKind } from "./appliers";
import { learningEventPayload } from "./createProposal";
import { findProposal } from "./findProposal";
import { assertMove, moveProposal } from "./moveProposal";
import { explainView, proposalView, tuningActionView } from "./views";

/**
 * Applies an approved proposal: the kind's applier sets `proposed` on the target, and a tuning
 * action records the change with the proposal's explain metadata in its payload. The target must
 * still be in the state the proposal saw (`previous`), else 409: a rollback could not restore it.
 * Puts `learning.applied` on the bus.
 */
export async function applyProposal(db: Db, principal: Principal, id: string) {
  return change(db, principal, id, "apply");
}

/**
 * Rolls an applied proposal back: the applier sets `previous` again, exactly as stored when the
 * proposal was made. The target must still be in the applied state, else 409 (something changed it
 * since; rolling back would overwrite that). Puts `learning.rolled_back` on the bus.
 */
export async function rollbackProposal(db: Db, principal: Principal, id: string) {
  return change(db, principal, id, "rollback");
}

async function change(db: Db, principal: Principal, id: string, action: "apply" | "rollback") {
  const row = await findProposal(db, principal.orgDid, id);
  const to = action === "apply" ? "applied" : "rolled_back";
  assertMove(row, to);
  const applier = learningApplier(row.kind as LearningKind);
  if (!applier) throw Conflict(`No area of this service applies ${row.kind} proposals any more.`);
  const [from, into] = action === "apply" ? [row.previous, row.proposed] : [row.proposed, row.previous];
  const now = JSON.stringify(await applier.current(db, row.orgDid, row.target));
  if (now !== from)
    throw domainError(
      "learning_target_changed",
      `The ${row.kind} of ${row.target} changed since the proposal was ${action === "apply" ? "made" : "applied"}: it is ${now}, not ${from}.`,
      { current: JSON.parse(now), expected: JSON.parse(from) },
    );
  const state = JSON.parse(into) as Record<string, unknown>;
  if (action === "apply") await applier.validate(db, row.orgDid, row.target, state);
  await applier.apply(db, row.orgDid, row.target, state, { actorDid: principal.actorDid, proposalId: row.id, action });
  const moved = await moveProposal(db, row, to, principal.actorDid);
  const tuning = await recordTuningAction(db, moved, action, principal.actorDid, JSON.parse(from), state);
  const view = proposalView(moved);
  await putPlatformEvent(db, undefined, row.orgDid, {
    type: action === "apply" ? "learning.applied" : "learning.rolled_back",
    payload: { ...learningEventPayload(view), tuning_action_id: tuning.id },
  });
  return { proposal: view, tuning_action: tuningActionView(tuning) };
}

/** The tuning action's row: the change and the explain metadata as it stands after the move. */
function recordTuningAction(
  db: Db,
  row: Row,
  action: "apply" | "rollback",
  actorDid: string,
  from: unknown,
  to: unknown,
) {
  return db.learningTuningAction.create({
    data: {
      id: newId("lta"),
      orgDid: row.orgDid,
      proposalId: row.id,
      action,
      payload: JSON.stringify({ kind: row.kind, target: row.target, from, to, explain: explainView(row) }),
      actorDid,
    },
  });
}
