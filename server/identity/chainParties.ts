import type { Db } from "../db/client";

/** Who stands behind a delegation chain, as `chainParties` reads it. */
export interface ChainParties {
  /** The delegation ids, root first (the ancestry, then the delegation itself). */
  chain: string[];
  /**
   * The people and agents behind the chain: every holder and grantor along it other than the
   * organization. Only a chain the organization alone holds (the operator's keys, keys derived
   * from them to the organization) stands for the organization itself.
   */
  parties: string[];
  /** Whether a delegation of the chain was issued to an agent passport. */
  throughAgent: boolean;
}

/**
 * The people and agents behind a delegation chain, to tell whether two chains are the same
 * requester.
 *
 * Why the organization is left out when anyone else stands in the chain: it is the grantor of
 * every person's standing grant and the holder of every API key, so counting it would make every
 * two credentials of an organization one requester, and a console key (held by the organization,
 * granted by the member who minted it) would hide the person behind it. Every derived
 * delegation's grantor is its parent's holder, so a key a member minted names that member (its
 * grantor, and the holder of the standing grant it derives from).
 */
export async function chainParties(db: Db, orgDid: string, chain: string[]): Promise<ChainParties> {
  const rows =
    chain.length === 0
      ? []
      : await db.delegation.findMany({
          where: { id: { in: chain }, orgDid },
          select: { grantorDid: true, delegateDid: true },
        });
  const parties = new Set<string>();
  for (const r of rows) for (const did of [r.grantorDid, r.delegateDid]) if (did !== orgDid) parties.add(did);
  const agents =
    parties.size === 0
      ? 0
      : await db.passport.count({
          where: { did: { in: rows.map((r) => r.delegateDid) }, orgDid, type: "agent" },
        });
  return { chain, parties: parties.size > 0 ? [...parties] : [orgDid], throughAgent: agents > 0 };
}

/** The chain of a stored delegation (its ancestry, then itself), or just its id when it is gone. */
export async function delegationChain(db: Db, delegationId: string): Promise<string[]> {
  const row = await db.delegation.findUnique({ where: { id: delegationId }, select: { ancestry: true } });
  return [...(row?.ancestry ? row.ancestry.split(" ") : []), delegationId];
}
