import type { IncomingMessage, ServerResponse } from "node:http";
import { config } from "../config";
import { DomainError, MethodNotAllowed, RouteNotFound } from "../errors";
import { GateError, recordRefusal, tooManyRequests } from "../governance/governCall";
import { health } from "../meta/health";
import { jwksResponse } from "../meta/jwks";
import { openApiResponse } from "../openapi/document";
import { CLIENT_ADDRESS_HEADER } from "./clientAddress";
import { answerOperation, requestIdFor } from "./gate";
import type { Operation } from "./operation";
import { registeredOperations } from "./operationRegistry";
import { problemAnswer, toProblem } from "./problem";
import { rateLimitHeaders, takeToken, type RateLimitState } from "./rateLimit";
import { logger } from "../telemetry/log";
import { processWide } from "../processWide";
import { fromIncomingMessage, fromWebRequest, toResponse, type V1Answer, type V1Request } from "./v1Request";

/**
 * The one routing table of the public API: every declared operation (as the root registers them,
 * server/http/operationRegistry.ts), the public documents (health, OpenAPI, JWKS), and
 * problem+json 404s and 405s for the rest.
 * Both transports use it: svc's node:http fast path (`handleV1`, also what the integration tests
 * mount) and Next.js's catch-all `app/v1/[[...path]]/route.ts` (`dispatchV1`). A new operation needs
 * no route file: declaring it in its area's operations.ts is enough.
 */
interface Route {
  method: string;
  /** The path template, e.g. `/v1/passports/{did}`. */
  template: string;
  pattern: RegExp;
  names: string[];
  target: { op: Operation } | { document: PublicDocument };
}

/** A document anyone may read: unauthenticated, unrecorded when served, rate limited per address. */
interface PublicDocument {
  id: string;
  serve(): Promise<Response>;
}

function compile(method: string, template: string, target: Route["target"]): Route {
  const names: string[] = [];
  const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_m, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  return { method, template, pattern: new RegExp(`^${source}$`), names, target };
}

function compileTable(operations: readonly Operation[]): Route[] {
  return [
    ...operations.map((op) => compile(op.method, op.path, { op })),
    compile("GET", "/v1/health", { document: { id: "health", serve: health } }),
    compile("GET", "/v1/openapi.json", { document: { id: "openapi", serve: openApiResponse } }),
    compile("GET", "/.well-known/jwks.json", { document: { id: "jwks", serve: jwksResponse } }),
    // Static segments win over parameters, as in Next.js.
  ].sort((a, b) => a.names.length - b.names.length);
}

// Compiled on the first request, once the entry point has registered the root's operations.
const table = processWide("http.routingTable", () => ({
  operations: undefined as readonly Operation[] | undefined,
  routes: [] as Route[],
}));

function routes(): Route[] {
  const operations = registeredOperations();
  if (table.operations !== operations) {
    table.routes = compileTable(operations);
    table.operations = operations;
  }
  return table.routes;
}

export type Resolution =
  | { kind: "route"; route: Route; params: Record<string, string> }
  | { kind: "method_not_allowed"; template: string; allow: string[] }
  | { kind: "not_found" };

/**
 * Finds what serves `method pathname` (an already normalized URL path, so `%2e%2e` and trailing
 * slashes get no special meaning). The most specific matching path decides, as in Next.js: a
 * method it does not serve is a 405 naming those it does. HEAD is served by GET.
 */
export function resolveV1(method: string, pathname: string): Resolution {
  const all = routes();
  const first = all.find((r) => r.pattern.test(pathname));
  if (!first) return { kind: "not_found" };
  const same = all.filter((r) => r.template === first.template);
  const route = same.find((r) => r.method === method || (method === "HEAD" && r.method === "GET"));
  if (!route) {
    const methods = same.map((r) => r.method);
    return {
      kind: "method_not_allowed",
      template: first.template,
      allow: (methods.includes("GET") ? [...methods, "HEAD"] : methods).sort(),
    };
  }
  const match = route.pattern.exec(pathname)!;
  const params = Object.fromEntries(route.names.map((n, i) => [n, decodeParam(match[i + 1]!)]));
  return { kind: "route", route, params };
}

function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Whether the table answers this path at all (everything under /v1, the JWKS and /metrics). */
export function servesPath(pathname: string): boolean {
  return (
    pathname === "/v1" ||
    pathname.startsWith("/v1/") ||
    pathname === "/.well-known/jwks.json" ||
    pathname === "/metrics"
  );
}

/**
 * Answers one Web request from the table. The client's address is read from
 * CLIENT_ADDRESS_HEADER, which svc's server sets (server/http/clientAddress.ts; never the client's own value).
 * Never throws: an unexpected failure is a problem+json 500 with an incident id.
 */
export async function dispatchV1(request: Request): Promise<Response> {
  const response = toResponse(await answer(fromWebRequest(request)));
  return request.method === "HEAD"
    ? new Response(null, { status: response.status, headers: response.headers })
    : response;
}

async function answer(request: V1Request): Promise<V1Answer> {
  const requestId = requestIdFor(request);
  let pathname = "/";
  let rl: RateLimitState | undefined;
  try {
    const url = new URL(request.url);
    pathname = url.pathname;
    const found = resolveV1(request.method, pathname);
    if (found.kind === "route" && "op" in found.route.target)
      return await answerOperation(found.route.target.op, request, url, found.params);

    // Public documents, 404s and 405s answer before authentication: the caller's address is its rate-limit key.
    const document =
      found.kind === "route" && "document" in found.route.target ? found.route.target.document : undefined;
    rl = await takeToken(
      `addr:${request.header(CLIENT_ADDRESS_HEADER) ?? "unknown"}:${document ? `doc:${document.id}` : "unrouted"}`,
      config().rateLimitAnonymousPerMinute,
    );
    if (rl.allowed && document)
      return withHeaders(await document.serve(), { "X-Request-Id": requestId, ...rateLimitHeaders(rl) });
    const refusal = !rl.allowed
      ? tooManyRequests(rl)
      : found.kind === "method_not_allowed"
        ? methodNotAllowed(request.method, pathname, found.allow)
        : notFound(pathname);
    const template =
      found.kind === "route"
        ? found.route.template
        : found.kind === "method_not_allowed"
          ? found.template
          : pathname.slice(0, 200);
    await recordRefusal(
      `${request.method} ${template}`,
      requestId,
      refusal.status,
      { traceparent: request.header("traceparent"), tracestate: request.header("tracestate") },
      // An unknown path is the caller's to choose: its refusals are counted together.
      found.kind === "not_found" ? `${request.method} (unknown path)` : `${request.method} ${template}`,
    );
    throw new GateError(refusal, rl);
  } catch (e) {
    const gateError = e instanceof GateError ? e : new GateError(e, rl);
    const { problem, headers } = toProblem(gateError.error, pathname, requestId);
    return problemAnswer(problem, {
      "X-Request-Id": requestId,
      ...(gateError.rateLimit ? rateLimitHeaders(gateError.rateLimit) : {}),
      ...headers,
    });
  }
}

const notFound = RouteNotFound;
const methodNotAllowed = MethodNotAllowed;

function withHeaders(response: Response, headers: Record<string, string>): Response {
  const out = new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  for (const [k, v] of Object.entries(headers)) if (!out.headers.has(k)) out.headers.set(k, v);
  return out;
}

/**
 * The node:http transport (svc's server, and the integration tests' server): the same table
 * without Next.js's page pipeline, which costs about 1 ms of CPU a request on these machines, and
 * without Web Requests and Responses where none is needed (server/http/v1Request.ts).
 */
export async function handleV1(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = fromIncomingMessage(req);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  try {
    // A request that may carry a body gets its Web Request (and the body's stream) at once, as
    // every request did before the fast path learnt to do without (a refusal reads none of it).
    if (hasBody) request.web();
    const out = await answer(request);
    // A body the handler stopped reading (413) leaves the connection unusable: close it.
    if (hasBody && !req.complete) res.shouldKeepAlive = false;
    if (!(out instanceof Response)) {
      // One write: the status line, the headers and the body, with its length.
      const headers: Record<string, string | number> = out.headers;
      if (out.status !== 204 && out.status !== 304) headers["Content-Length"] = Buffer.byteLength(out.body ?? "");
      res.writeHead(out.status, headers);
      res.end(req.method === "HEAD" ? undefined : (out.body ?? undefined));
      return;
    }
    res.statusCode = out.status;
    out.headers.forEach((value, key) => res.setHeader(key, value));
    if (!out.body || req.method === "HEAD") {
      res.end();
      return;
    }
    const reader = out.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve));
    }
    res.end();
  } catch (e) {
    // Only the transport itself can fail here (the table answers every error): a client gone mid-stream.
    logger().error({ err: e }, "/v1 transport failed");
    if (!res.headersSent) {
      res.writeHead(500, { "Content-Type": "application/problem+json" });
      res.end(
        JSON.stringify({
          type: `${config().publicUrl}/docs/errors#internal_error`,
          title: "Internal error",
          status: 500,
          detail: "The response could not be sent.",
          instance: (req.url ?? "/").split("?")[0],
          request_id: request.header("x-request-id") ?? "",
        }),
      );
    } else res.destroy();
  }
}
