import { appRouter } from "@/server/appRouter";
import { sessionUser } from "@/server/members/consoleSession";
import { handlerWithSession } from "@/server/trpc/handler";

/** The console's tRPC endpoint: the root's router, the caller read from Next.js's session cookie. */
const trpcHandler = handlerWithSession(appRouter, sessionUser);

export { trpcHandler as GET, trpcHandler as POST };
