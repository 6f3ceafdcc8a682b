import { getServerSession } from "next-auth";
import { database } from "../db/client";
import { authenticateSession, type Principal } from "../identity/authenticate";
import { authOptions } from "./nextAuth";

/** The signed-in person behind a console page, or null (no session, or it was revoked or signed out). */
export async function currentPerson(): Promise<(Principal & { name: string }) | null> {
  const session = await getServerSession(authOptions);
  const user = session?.user as { delegationId?: string; name?: string } | undefined;
  if (!user?.delegationId) return null;
  try {
    return { ...(await authenticateSession(await database(), user.delegationId)), name: user.name ?? "" };
  } catch {
    return null;
  }
}
