import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { health } from "../meta/health";
import { jwksResponse } from "../meta/jwks";
import { openApiResponse } from "../openapi/document";
import { CLIENT_ADDRESS_HEADER, serve } from "./gate";
import type { Operation } from "./operation";
import { operations } from "./operations";
import { newId } from "../ids";

/**
 * The fast path for /v1: serves the same handlers as the app/v1 route files (the same `serve(op)`
 * gate) straight from node:http, without Next.js's page pipeline, which costs about 1 ms of CPU a
 * request on these machines. The console and everything else still go through Next.js.
 */
type WebHandler = (req: Request, ctx?: { params?: Promise<Record<string, string>> }) => Promise<Response> | Response;
interface Route {
  method: string;
  pattern: RegExp;
  names: string[];
  handler: WebHandler;
  static: boolean;
}

function compile(method: string, template: string, handler: WebHandler): Route {
  const names: string[] = [];
  const source = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{([^}]+)\}/g, (_m, name: string) => {
    names.push(name);
    return "([^/]+)";
  });
  return { method, pattern: new RegExp(`^${source}$`), names, handler, static: names.length === 0 };
}

const routes: Route[] = [
  ...operations.map((op: Operation) => compile(op.method, op.path, serve(op))),
  compile("GET", "/v1/health", health),
  compile("GET", "/v1/openapi.json", openApiResponse),
  compile("GET", "/.well-known/jwks.json", jwksResponse),
].sort((a, b) => Number(b.static) - Number(a.static)); // static segments win, as in Next.js

/** Whether the fast path serves this path (any method: a wrong method still gets its 405 here). */
export function servesPath(pathname: string): boolean {
  return routes.some((r) => r.pattern.test(pathname));
}

/** Serves one /v1 request; answers 405 for a known path with another method. */
export async function handleV1(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://localhost");
  let pathname: string;
  try {
    pathname = url.pathname;
  } catch {
    pathname = "/";
  }
  const candidates = routes.filter((r) => r.pattern.test(pathname));
  const route = candidates.find((r) => r.method === req.method || (req.method === "HEAD" && r.method === "GET"));
  if (!route) {
    const requestId = newId("req");
    res.writeHead(405, { Allow: [...new Set(candidates.map((r) => r.method))].join(", "), "Content-Type": "application/problem+json", "X-Request-Id": requestId });
    res.end(JSON.stringify({ type: "about:blank", title: "Method not allowed", status: 405, detail: `${req.method} is not allowed on ${pathname}.`, instance: pathname, request_id: requestId }));
    return;
  }
  const match = route.pattern.exec(pathname)!;
  let params: Record<string, string>;
  try {
    params = Object.fromEntries(route.names.map((n, i) => [n, decodeURIComponent(match[i + 1]!)]));
  } catch {
    params = Object.fromEntries(route.names.map((n, i) => [n, match[i + 1]!]));
  }
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (name.toLowerCase() !== CLIENT_ADDRESS_HEADER) headers.append(name, req.rawHeaders[i + 1]!);
  }
  headers.set(CLIENT_ADDRESS_HEADER, req.socket.remoteAddress ?? "unknown");
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  // The Host header is the client's to send: never let it into the URL (a malformed one would throw).
  const request = new Request(`http://localhost${req.url?.startsWith("/") ? req.url : "/"}`, {
    method: req.method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" } : {}),
  } as RequestInit);
  const response = await route.handler(request, { params: Promise.resolve(params) });
  // A body the handler stopped reading (413) leaves the connection unusable: close it.
  if (hasBody && !req.complete) res.shouldKeepAlive = false;
  res.statusCode = response.status;
  response.headers.forEach((value, key) => res.setHeader(key, value));
  if (!response.body || req.method === "HEAD") {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise<void>((resolve) => res.once("drain", resolve));
  }
  res.end();
}
