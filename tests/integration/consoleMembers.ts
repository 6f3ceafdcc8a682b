import { database } from "@/server/db/client";
import { authenticateSession } from "@/server/identity/authenticate";
import { newId } from "@/server/ids";
import { completeRegistration, registrationOptions } from "@/server/members/passkeys";
import type { Role } from "@/server/members/roles";
import { createInvite, startConsoleSession } from "@/server/members/sessions";
import { rootOrgDid } from "@/server/setup/bootstrap";
import { createCaller } from "@/server/appRouter";
import { softAuthenticator } from "./softAuthenticator";

/**
 * A new member of the root organization with `role`: invited, registered with a passkey, signed
 * in to the console with it (a fresh passkey assertion in the session); a tRPC caller on that
 * console session.
 */
export async function consoleMember(role: Role) {
  const db = await database();
  const link = await db.writeTx(async (tx) => createInvite(tx, (await rootOrgDid(db))!, role, null, "invite", 1));
  const token = new URL(link.link).searchParams.get("token")!;
  const { challengeId, options } = await registrationOptions(db, token, `A ${role}`);
  const registered = await completeRegistration(
    db,
    challengeId,
    softAuthenticator().register(options.challenge) as never,
  );
  const member = (await db.read.member.findUnique({ where: { passportDid: registered.did } }))!;
  // Signed in with the passkey it just registered: the session's assertion is fresh, as a browser's is.
  const { delegationId } = await startConsoleSession(db, member, { passkeyAssertedAt: new Date() });
  return {
    did: registered.did,
    delegationId,
    caller: createCaller({
      authorization: null,
      clientAddress: "127.0.0.1",
      requestId: newId("req"),
      authenticate: () => authenticateSession(db, delegationId),
    }),
  };
}
