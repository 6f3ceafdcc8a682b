import { getServerSession } from "next-auth";
import { database } from "../db/client";
import { authenticateSession } from "../identity/authenticate";
import type { Principal } from "../governance/principal";
import { authOptions } from "./nextAuth";

/** The session cookie's person: their name and session delegation id, not yet checked against the database. */
export async function sessionUser(): Promise<{ delegationId: string; name: string } | null> {
  const user = (await getServerSession(authOptions))?.user as { delegationId?: string; name?: string } | undefined;
  return user?.delegationId ? { delegationId: user.delegationId, name: user.name ?? "" } : null;
}

/** The signed-in person behind a console page, or null (no session, or it was revoked or signed out). */
export async function currentPerson(): Promise<(Principal & { name: string }) | null> {
  const user = await sessionUser();
  if (!user) return null;
  try {
    return { ...(await authenticateSession(await database(), user.delegationId)), name: user.name };
  } catch {
    return null;
  }
}
