import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { database } from "@/server/db/client";
import { config } from "@/server/config";
import { CLIENT_ADDRESS_HEADER, readLimited } from "@/server/http/gate";
import { problemResponse, toProblem } from "@/server/http/problem";
import { newId } from "@/server/ids";
import { authenticateSession } from "@/server/identity/authenticate";
import { sessionUser } from "@/server/members/consoleSession";
import { recordConsoleEvent } from "@/server/members/sessions";
import { rootOrgDidOf } from "@/server/setup/rootOrg";
import { contextFromHeaders } from "@/server/trpc/init";
import { appRouter } from "@/server/trpc/root";

/** The console's tRPC endpoint: a signed-in person's session, or a bearer token, is the caller. */
const handler = async (original: Request) => {
  // The console only calls its own origin: refuse what a browser marks as cross-site (CSRF defence
  // beside the SameSite=Lax session cookie).
  if (original.headers.get("sec-fetch-site") === "cross-site") {
    return problemResponse({ type: "about:blank", title: "Forbidden", status: 403, detail: "Cross-site requests to the console API are refused.", instance: new URL(original.url).pathname, request_id: newId("req") }, {});
  }
  // The same body limit as /v1, enforced before tRPC reads (and batches) anything.
  let req = original;
  if (original.method === "POST") {
    try {
      const body = await readLimited(original, config().maxBodyBytes);
      req = new Request(original.url, { method: "POST", headers: original.headers, body: Uint8Array.from(body) });
    } catch (e) {
      const { problem, headers } = toProblem(e, new URL(original.url).pathname, newId("req"));
      const db = await database();
      await recordConsoleEvent(db, "TRPC (body refused)", (await rootOrgDidOf(db)) ?? "unknown", null, null, problem.status, "denied");
      return problemResponse(problem, headers);
    }
  }
  const delegationId = (await sessionUser())?.delegationId;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    // Every batched call is a governed call with its own record: keep batches small.
    maxBatchSize: 10,
    createContext: () => {
      const ctx = contextFromHeaders(req.headers, req.headers.get(CLIENT_ADDRESS_HEADER) ?? "unknown");
      return delegationId ? { ...ctx, authenticate: async () => authenticateSession(await database(), delegationId) } : ctx;
    },
  });
};

export { handler as GET, handler as POST };
