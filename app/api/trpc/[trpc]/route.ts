import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getServerSession } from "next-auth";
import { database } from "@/server/db/client";
import { CLIENT_ADDRESS_HEADER } from "@/server/http/gate";
import { authenticateSession } from "@/server/identity/authenticate";
import { authOptions } from "@/server/members/nextAuth";
import { contextFromHeaders } from "@/server/trpc/init";
import { appRouter } from "@/server/trpc/root";

/** The console's tRPC endpoint: a signed-in person's session, or a bearer token, is the caller. */
const handler = async (req: Request) => {
  const session = await getServerSession(authOptions);
  const delegationId = (session?.user as { delegationId?: string } | undefined)?.delegationId;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: () => {
      const ctx = contextFromHeaders(req.headers, req.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown");
      return delegationId ? { ...ctx, authenticate: async () => authenticateSession(await database(), delegationId) } : ctx;
    },
  });
};

export { handler as GET, handler as POST };
