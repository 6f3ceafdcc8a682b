import type { Db } from "../db/client";
import { NotFound } from "../errors";

/** One proposal of `orgDid` (another organization's is a 404, as an unknown id). */
export async function findProposal(db: Db, orgDid: string, id: string) {
  const row = await db.learningProposal.findFirst({ where: { id, orgDid } });
  if (!row) throw NotFound("learning proposal", id);
  return row;
}
