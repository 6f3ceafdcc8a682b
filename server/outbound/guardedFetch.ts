import { OutboundFailed } from "./errors";
import { outboundRequest, type OutboundOptions } from "./outboundRequest";

/** Limits of a guarded fetch; an SDK's answers (OAuth tokens, model replies) can outgrow outboundRequest's 64 KiB default. */
export type GuardedFetchOptions = Pick<OutboundOptions, "timeoutMs" | "maxBytes" | "maxRedirects" | "requireHttps">;

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

async function bodyBytes(body: BodyInit | null | undefined, headers: Headers): Promise<Uint8Array | undefined> {
  if (body === null || body === undefined) return undefined;
  // What SDKs send (a JSON text, bytes), encoded as fetch encodes them without building a Request
  // and reading its stream back (a tenth of a model call's CPU in svc before).
  if (typeof body === "string") {
    if (!headers.has("content-type")) headers.set("content-type", "text/plain;charset=UTF-8");
    return new TextEncoder().encode(body);
  }
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  // Request does the encoding of every BodyInit (FormData, URLSearchParams, streams) and supplies its Content-Type.
  const request = new Request("http://body.invalid/", { method: "POST", body, duplex: "half" } as RequestInit);
  const type = request.headers.get("content-type");
  if (type && !headers.has("content-type")) headers.set("content-type", type);
  return new Uint8Array(await request.arrayBuffer());
}

/**
 * A `fetch` for SDKs that take one, made of outboundRequest: the same guard, redirects followed
 * hop by hop, the same time limit. An answer over `maxBytes` rejects with `outbound_failed`
 * rather than handing an SDK a cut-off body. Streaming answers are not supported.
 */
export function createGuardedFetch(limits: GuardedFetchOptions = {}): typeof fetch {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = request ? request.url : String(input);
    const headers = new Headers(request?.headers);
    new Headers(init.headers).forEach((value, name) => headers.set(name, value));
    const body =
      init.body !== undefined
        ? await bodyBytes(init.body, headers)
        : request?.body
          ? new Uint8Array(await request.clone().arrayBuffer())
          : undefined;
    const redirectMode = init.redirect ?? request?.redirect ?? "follow";
    const maxBytes = limits.maxBytes ?? 1024 * 1024;
    const answer = await outboundRequest(url, {
      ...limits,
      maxBytes,
      method: init.method ?? request?.method ?? "GET",
      headers: Object.fromEntries(headers),
      body,
      redirect: redirectMode === "follow" ? "follow" : "manual",
      signal: init.signal ?? request?.signal ?? undefined,
    });
    if (answer.truncated)
      throw new OutboundFailed(`The answer from ${new URL(answer.url).origin} is over ${maxBytes} bytes.`);
    if (redirectMode === "error" && answer.status >= 300 && answer.status < 400 && answer.headers.location) {
      throw new TypeError(`fetch to ${url} was redirected and redirect is "error"`);
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value])
        responseHeaders.append(name, item);
    }
    const response = new Response(NULL_BODY_STATUSES.has(answer.status) ? null : new Uint8Array(answer.body), {
      status: answer.status,
      headers: responseHeaders,
    });
    Object.defineProperty(response, "url", { value: answer.url });
    Object.defineProperty(response, "redirected", { value: answer.redirects > 0 });
    return response;
  };
}

/** The guarded fetch with default limits (10 s, 1 MiB, 3 redirects). */
export const guardedFetch: typeof fetch = createGuardedFetch();
