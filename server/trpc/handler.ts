import type { AnyRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { config } from "../config";
import { database } from "../db/client";
import { DomainError, Forbidden, ValidationFailed } from "../errors";
import { clientAddress } from "../http/clientAddress";
import { readLimited } from "../http/gate";
import { problemResponse, toProblem } from "../http/problem";
import { crossSiteRefusal } from "../http/sameOrigin";
import { authenticateSession } from "../identity/authenticate";
import { newId } from "../ids";
import { recordAnonymousRefusal } from "../governance/anonymousRefusals";
import { consoleEntry } from "../governance/consoleEntry";
import { rootOrgDidOf } from "../setup/rootOrg";
import { contextFromHeaders } from "./init";

/** Every batched call is a governed call with its own record: batches stay small. */
export const MAX_BATCH_SIZE = 10;

type Session = () => Promise<{ delegationId: string } | null>;

/**
 * The console's tRPC endpoint: a signed-in person's session, or a bearer token, is the caller.
 * What is refused before any procedure runs (cross-site, a body over the limit, a batch too large)
 * is answered as problem+json and leaves a denied record, like every other call.
 *
 * The entry point hands down the root's router (server/appRouter.ts) and its way of reading the
 * session cookie (Next.js's, in app/api/trpc/[trpc]/route.ts; tests have none): the mechanism
 * imports neither the areas nor the members area's sessions.
 */
export function handlerWithSession(router: AnyRouter, session: Session) {
  return (request: Request) => handle(request, router, session);
}

async function handle(original: Request, router: AnyRouter, session: Session): Promise<Response> {
  const url = new URL(original.url);
  // The console only calls its own origin (server/http/sameOrigin.ts).
  const crossSite = crossSiteRefusal(original);
  if (crossSite !== undefined) return refuse(url, "TRPC (cross-site refused)", Forbidden(crossSite));
  // tRPC would answer an oversized batch itself, before any procedure (and so any record).
  const procedures = url.pathname.replace(/^\/api\/trpc\/?/, "").split(/,|%2C/i).length;
  if (procedures > MAX_BATCH_SIZE) {
    return refuse(
      url,
      "TRPC (batch refused)",
      ValidationFailed(
        [
          {
            field: "batch",
            code: "OUT_OF_RANGE",
            message: `A batch holds at most ${MAX_BATCH_SIZE} calls; this one has ${procedures}.`,
          },
        ],
        "The batch is too large.",
      ),
    );
  }
  // The same body limit as /v1, enforced before tRPC reads (and batches) anything.
  let req = original;
  if (original.method === "POST") {
    try {
      const body = await readLimited(original, config().maxBodyBytes);
      req = new Request(original.url, { method: "POST", headers: original.headers, body: Uint8Array.from(body) });
    } catch (e) {
      return refuse(url, "TRPC (body refused)", e);
    }
  }
  const delegationId = (await session())?.delegationId;
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router,
    maxBatchSize: MAX_BATCH_SIZE,
    createContext: () => {
      const ctx = contextFromHeaders(req.headers, clientAddress(req));
      return delegationId
        ? { ...ctx, authenticate: async () => authenticateSession(await database(), delegationId) }
        : ctx;
    },
  });
  // tRPC answers an unsupported content type (415) with a JSON body but no JSON label.
  if (response.status === 415 && !/json/i.test(response.headers.get("content-type") ?? "")) {
    const headers = new Headers(response.headers);
    headers.set("content-type", "application/json");
    return new Response(response.body, { status: response.status, headers });
  }
  return response;
}

async function refuse(url: URL, operation: string, error: unknown): Promise<Response> {
  const requestId = newId("req");
  const { problem, headers } = toProblem(error, url.pathname, requestId);
  const db = await database();
  // Refused before anyone is authenticated: counted per window (server/governance/anonymousRefusals.ts).
  await recordAnonymousRefusal(
    db,
    consoleEntry(operation, (await rootOrgDidOf(db)) ?? "unknown", null, null, problem.status, "denied"),
  );
  return problemResponse(problem, { "X-Request-Id": requestId, ...headers });
}
