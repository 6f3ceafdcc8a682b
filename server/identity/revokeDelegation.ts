import type { Db } from "../db/client";
import { Forbidden, IllegalTransition, NotFound } from "../errors";
import { coveredBy } from "./capabilities";
import { newId } from "../ids";
import type { Principal } from "../governance/principal";
import { runRevocationHooks } from "./revocationHooks";
import { revocationView } from "./views";

export const ADMIN_CAPABILITY = "svc_api:delegations:admin";

/**
 * Revokes a delegation and every delegation derived from it, recording a RevocationRecord for
 * each. Tokens are refused from the moment this commits, in every process: the gate checks the
 * whole chain of a token's delegation on each call. Revoking twice is a 409.
 */
export async function revokeDelegation(
  db: Db,
  principal: Principal,
  id: string,
  input: { reason?: string; metadata?: Record<string, unknown> } = {},
) {
  const target = await db.delegation.findFirst({ where: { id, orgDid: principal.orgDid } });
  if (!target) throw NotFound("delegation", id);
  // A delegation may revoke itself and what derives from it; anyone else's needs the org-wide right.
  const own =
    target.id === principal.delegationId ||
    (principal.delegationId !== "" && target.ancestry.split(" ").includes(principal.delegationId));
  if (!own && !coveredBy(principal.capabilities, ADMIN_CAPABILITY)) {
    throw Forbidden(
      `You can revoke your own delegation and those derived from it; revoking delegation ${id} needs the capability ${ADMIN_CAPABILITY}.`,
      { missing_capability: ADMIN_CAPABILITY },
    );
  }
  if (target.revokedAt) throw IllegalTransition("delegation", "revoked", "revoked");
  const revokedAt = new Date();
  const descendants = await db.delegation.findMany({
    where: { orgDid: principal.orgDid, ancestry: { contains: id }, revokedAt: null },
    select: { id: true },
  });
  const ids = [id, ...descendants.map((d) => d.id)];
  await db.delegation.updateMany({ where: { id: { in: ids }, revokedAt: null }, data: { revokedAt } });
  await runRevocationHooks(db, ids);
  const record = await db.revocation.create({
    data: {
      id: newId("rev"),
      delegationId: id,
      orgDid: principal.orgDid,
      revokedBy: principal.actorDid,
      revokedAt,
      reason: input.reason ?? null,
      metadata: (input.metadata as object | undefined) ?? undefined,
    },
  });
  if (descendants.length > 0) {
    await db.revocation.createMany({
      data: descendants.map((d) => ({
        id: newId("rev"),
        delegationId: d.id,
        orgDid: principal.orgDid,
        revokedBy: principal.actorDid,
        revokedAt,
        reason: `Derived from revoked delegation ${id}`,
        metadata: { cascaded_from: id },
      })),
    });
  }
  return revocationView(record);
}
