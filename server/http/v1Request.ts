import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import { CLIENT_ADDRESS_HEADER, clientAddressOf } from "./clientAddress";

/**
 * A /v1 request as the routing table and the gate read it, and the answer they give, whichever
 * transport carries them. Next.js's transport hands a Web `Request` and wants a `Response`;
 * svc's node:http fast path (`handleV1`) reads the IncomingMessage as it is and writes the answer
 * straight to the socket. undici's Request (its Headers, its AbortSignal) and reading a
 * `Response`'s body back as a stream cost more CPU than all the rest of a governed read's
 * transport (issue 30), so the fast path builds a Web Request only when something needs one
 * whole: a body to read, an operation that authenticates the request itself.
 */
export interface V1Request {
  readonly method: string;
  /** The absolute URL, as `Request.url` (the fast path's host is always `localhost`). */
  readonly url: string;
  /** A header's value as `Headers.get` gives it (repeated headers joined by ", "), or null. */
  header(name: string): string | null;
  /** The Web Request, built on first use. */
  web(): Request;
}

/** What the table answers: a Web Response as it is (documents, streams), or a status, headers and a text body. */
export type V1Answer = Response | PlainAnswer;

export interface PlainAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/** A Web Request as a V1Request (Next.js's transport, tests, in-process callers). */
export function fromWebRequest(request: Request): V1Request {
  return {
    method: request.method,
    url: request.url,
    header: (name) => request.headers.get(name),
    web: () => request,
  };
}

/** A V1Answer as a Web Response. */
export function toResponse(answer: V1Answer): Response {
  return answer instanceof Response
    ? answer
    : new Response(answer.body, { status: answer.status, headers: answer.headers });
}

/**
 * A node:http request as a V1Request: the same header values a Web Request would hold (names
 * lower-cased, repeats joined by ", "), with the client's address resolved from the socket (and
 * trusted proxies) under CLIENT_ADDRESS_HEADER, never a value the client sent under that name.
 */
export function fromIncomingMessage(req: IncomingMessage): V1Request {
  const headers = new Map<string, string>();
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name === CLIENT_ADDRESS_HEADER) continue;
    const sent = headers.get(name);
    headers.set(name, sent === undefined ? raw[i + 1]! : `${sent}, ${raw[i + 1]!}`);
  }
  headers.set(CLIENT_ADDRESS_HEADER, clientAddressOf(req));
  const method = req.method ?? "GET";
  // The Host header is the client's to send: never let it into the URL.
  const url = `http://localhost${req.url?.startsWith("/") ? req.url : "/"}`;
  let web: Request | undefined;
  return {
    method,
    url,
    header: (name) => headers.get(name.toLowerCase()) ?? null,
    web: () =>
      (web ??= new Request(url, {
        method,
        headers: [...headers],
        ...(method !== "GET" && method !== "HEAD"
          ? { body: Readable.toWeb(req) as ReadableStream, duplex: "half" }
          : {}),
      } as RequestInit)),
  };
}
