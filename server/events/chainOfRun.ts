import { type Db } from "../db/client";

/** Where an event emitted by a run stands in its chain: its depth and the event from outside the chain began with (null for a run invoked directly). */
export async function chainOfRun(db: Db, executionId: string): Promise<{ depth: number; rootEventId: string | null }> {
  const match = await db.eventMatch.findFirst({
    where: { executionId },
    select: { event: { select: { id: true, depth: true, rootEventId: true } } },
  });
  return match
    ? { depth: match.event.depth + 1, rootEventId: match.event.rootEventId ?? match.event.id }
    : { depth: 0, rootEventId: null };
}

/** The chain depth of an event emitted by a run: one more than the event that triggered it, 0 for a run invoked directly. */
export async function depthOfRun(db: Db, executionId: string): Promise<number> {
  const match = await db.eventMatch.findFirst({
    where: { executionId },
    select: { event: { select: { depth: true } } },
  });
  return match ? match.event.depth + 1 : 0;
}
