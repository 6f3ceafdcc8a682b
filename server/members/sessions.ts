import { randomBytes } from "node:crypto";
import { config } from "../config";
import type { Database, Db } from "../db/client";
import type { Member } from "../db/generated/sqlite/client";
import type { Principal } from "../governance/principal";
import { Conflict } from "../errors";
import { runRevocationHooks } from "../identity/revocationHooks";
import { newId } from "../ids";
import { appendInTransaction, appendProvenance } from "../provenance/appendProvenance";
import { consoleEntry } from "../governance/consoleEntry";
import { tokenHash } from "./passkeys";
import {
  MEMBER_GRANT_RENEW_BELOW_SECONDS,
  MEMBER_GRANT_SECONDS,
  roleCapabilities,
  SESSION_SECONDS,
  type Role,
} from "./roles";

/**
 * A signed-in person's session is a delegation (kind `session`) from their organization to their
 * human passport, derived from their standing grant, with their role's capabilities: every console call is authorized and recorded
 * through it exactly like an API call, and signing out or revoking the person revokes it, which
 * every process sees on the next call.
 */
export async function startConsoleSession(
  db: Database,
  member: Member,
  /** When the passkey assertion that signs the person in was verified (none: a company sign-in). */
  opts: { passkeyAssertedAt?: Date } = {},
): Promise<{ delegationId: string; expiresAt: Date }> {
  const id = newId("dlg");
  const now = new Date();
  const expiresAt = new Date(now.getTime() + SESSION_SECONDS * 1000);
  await db.writeTx(async (tx) => {
    const grant = await standingGrant(tx, member, now);
    await tx.delegation.create({
      data: {
        id,
        orgDid: member.orgDid,
        kind: "session",
        name: "console session",
        grantorDid: member.orgDid,
        delegateDid: member.passportDid,
        parentId: grant.id,
        ancestry: grant.id,
        capabilities: roleCapabilities(member.role as Role),
        createdAt: now,
        expiresAt,
        passkeyAssertedAt: opts.passkeyAssertedAt ?? null,
      },
    });
    await appendInTransaction(
      tx,
      db.engine,
      consoleEntry("CONSOLE session.start", member.orgDid, member.passportDid, id, 200, "allowed", "delegation", id),
    );
  });
  return { delegationId: id, expiresAt };
}

/**
 * The member's standing grant (kind `member`): the organization's delegation to the person, with
 * their role's capabilities, from which each session (hours) and each API key they create (days)
 * derives. Revoking the person revokes it, and with it everything derived from it.
 */
async function standingGrant(tx: Db, member: Member, now: Date) {
  const capabilities = roleCapabilities(member.role as Role);
  const live = await tx.delegation.findFirst({
    where: {
      kind: "member",
      orgDid: member.orgDid,
      delegateDid: member.passportDid,
      revokedAt: null,
      expiresAt: { gt: new Date(now.getTime() + MEMBER_GRANT_RENEW_BELOW_SECONDS * 1000) },
    },
    orderBy: { expiresAt: "desc" },
  });
  if (live && JSON.stringify(live.capabilities) === JSON.stringify(capabilities)) return live;
  return tx.delegation.create({
    data: {
      id: newId("dlg"),
      orgDid: member.orgDid,
      kind: "member",
      name: `console membership of ${member.displayName}`,
      grantorDid: member.orgDid,
      delegateDid: member.passportDid,
      capabilities,
      createdAt: now,
      expiresAt: new Date(now.getTime() + MEMBER_GRANT_SECONDS * 1000),
    },
  });
}

/**
 * Signing out, or a sign-in in the same browser replacing the session: the session's delegation
 * is revoked at once.
 */
export async function endConsoleSession(db: Database, delegationId: string, reason = "signed out"): Promise<void> {
  await db.writeTx(async (tx) => {
    const d = await tx.delegation.findUnique({ where: { id: delegationId } });
    if (!d || d.revokedAt || d.kind !== "session") return;
    const now = new Date();
    await tx.delegation.update({ where: { id: delegationId }, data: { revokedAt: now } });
    await runRevocationHooks(tx, [delegationId]);
    await tx.revocation.create({
      data: {
        id: newId("rev"),
        delegationId,
        orgDid: d.orgDid,
        revokedBy: d.delegateDid,
        revokedAt: now,
        reason,
      },
    });
    await appendInTransaction(
      tx,
      db.engine,
      consoleEntry(
        "CONSOLE session.end",
        d.orgDid,
        d.delegateDid,
        delegationId,
        200,
        "allowed",
        "delegation",
        delegationId,
      ),
    );
  });
}

/** Records a refused or completed console event (pre-authentication calls included). */
export function recordConsoleEvent(db: Database, ...args: Parameters<typeof consoleEntry>) {
  return appendProvenance(db, consoleEntry(...args));
}

/** Revokes a person: membership revoked, every live session of theirs revoked at once. */
export async function revokeMember(tx: Db, principal: Principal, passportDid: string) {
  {
    const member = await tx.member.findFirst({ where: { passportDid, orgDid: principal.orgDid } });
    if (!member) return null;
    if (
      member.role === "admin" &&
      member.status === "active" &&
      (await tx.member.count({ where: { orgDid: principal.orgDid, role: "admin", status: "active" } })) <= 1
    ) {
      throw Conflict("This is the organization's last administrator: invite another one before revoking them.");
    }
    const now = new Date();
    // Links they handed out die with their access.
    await tx.invite.updateMany({
      where: { createdBy: passportDid, usedAt: null, expiresAt: { gt: now } },
      data: { expiresAt: now },
    });
    await tx.member.update({ where: { passportDid }, data: { status: "revoked" } });
    await revokeGrantsOf(tx, principal.orgDid, passportDid, principal.actorDid, "member revoked");
    return { ...member, status: "revoked" };
  }
}

/**
 * Revokes every delegation a person holds in the organization (standing grant, sessions) and
 * everything derived from them (the API keys they created), at once for every process.
 */
export async function revokeGrantsOf(tx: Db, orgDid: string, passportDid: string, revokedBy: string, reason: string) {
  const now = new Date();
  const held = await tx.delegation.findMany({
    where: { delegateDid: passportDid, orgDid, revokedAt: null },
    select: { id: true },
  });
  // What derives from their grants (the API keys they created) is refused with them; marked so too.
  const derived =
    held.length === 0
      ? []
      : await tx.delegation.findMany({
          where: { orgDid, revokedAt: null, OR: held.map((d) => ({ ancestry: { contains: d.id } })) },
          select: { id: true },
        });
  const live = [...held, ...derived.filter((d) => !held.some((h) => h.id === d.id))];
  await tx.delegation.updateMany({ where: { id: { in: live.map((d) => d.id) } }, data: { revokedAt: now } });
  await runRevocationHooks(
    tx,
    live.map((d) => d.id),
  );
  for (const d of live)
    await tx.revocation.create({
      data: { id: newId("rev"), delegationId: d.id, orgDid, revokedBy, revokedAt: now, reason },
    });
}

export interface InviteLink {
  id: string;
  link: string;
  role: Role;
  expires_at: string;
}

/** Creates a single-use invitation link (or the first administrator's set-up link). */
export async function createInvite(
  tx: Db,
  orgDid: string,
  role: Role,
  createdBy: string | null,
  kind: "invite" | "setup" = "invite",
  hours = 72,
): Promise<InviteLink> {
  const token = randomBytes(32).toString("base64url");
  const id = newId("inv");
  const expiresAt = new Date(Date.now() + hours * 3600_000);
  await tx.invite.create({ data: { id, tokenHash: tokenHash(token), orgDid, role, kind, createdBy, expiresAt } });
  return {
    id,
    link: `${config().publicUrl}/${kind === "setup" ? "setup" : "invite"}?token=${token}`,
    role,
    expires_at: expiresAt.toISOString(),
  };
}

/** Whether the root organization still lacks an administrator (first-run set-up pending). */
export async function setupPending(db: Database, rootOrgDid: string): Promise<boolean> {
  return (await db.read.member.count({ where: { orgDid: rootOrgDid, role: "admin", status: "active" } })) === 0;
}
