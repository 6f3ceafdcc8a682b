import { inOutboundSpan } from "../telemetry/tracing";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from "request-filtering-agent";
import {
  addressAllowed,
  addressRefusal,
  agentAllowList,
  isAllowListed,
  literalRefusal,
  outboundAllow,
  type OutboundAllow,
} from "./allowList";
import { OutboundError, OutboundFailed, OutboundRefused, OutboundTimeout } from "./errors";
import { processWide } from "../processWide";

/**
 * The one HTTP client for calls svc makes to addresses its users chose (callbacks, webhooks,
 * OAuth, connectors, model providers). Every hop goes through request-filtering-agent, which
 * checks the address a socket is about to connect to: IP literals before connecting, names after
 * DNS, so a name that resolves to 10.0.0.1 or 169.254.169.254 is refused without a packet sent
 * to it. Redirects are followed here, not by the HTTP library, so each hop is checked again.
 */
export interface OutboundOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** For the whole call: connect, every redirect and the body. */
  timeoutMs?: number;
  /** The answer's body is cut at this many bytes (`truncated` says so) and the connection dropped. */
  maxBytes?: number;
  maxRedirects?: number;
  /** `manual` returns a 3xx as the answer (webhooks count it as a failure) instead of following it. */
  redirect?: "follow" | "manual";
  /** Plain http only to hosts in SVC_OUTBOUND_ALLOW (webhook endpoints). */
  requireHttps?: boolean;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
  redirects: number;
  durationMs: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const CROSS_ORIGIN_DROPPED = ["authorization", "cookie", "proxy-authorization"];
const BODY_HEADERS = [
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
  "transfer-encoding",
];

const agents = processWide("outbound.keptAliveAgents", () => new Map<string, http.Agent>());

/** Why svc will not connect to `address` (an IP) with this allow list, in request-filtering-agent's wording. */
function connectRefusal(address: string, host: string, allowed: readonly string[]): Error | undefined {
  if (addressAllowed(address, allowed)) return undefined;
  const why = addressRefusal(address);
  return why ? new Error(`DNS lookup ${address}(host:${host}) is not allowed. Because, ${why}.`) : undefined;
}

type Lookup = NonNullable<net.TcpNetConnectOpts["lookup"]>;
type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A DNS lookup whose answers pass `addressRefusal` (ipaddr.js ranges) before a socket connects to them. */
function guardedLookup(allowed: readonly string[], lookup: Lookup = dns.lookup as unknown as Lookup): Lookup {
  return ((hostname: string, options: dns.LookupOptions, callback: LookupCallback) => {
    (lookup as unknown as (h: string, o: dns.LookupOptions, cb: LookupCallback) => void)(
      hostname,
      options,
      (err, address, family) => {
        if (err) return callback(err, address, family);
        for (const a of Array.isArray(address) ? address.map((x) => x.address) : [address]) {
          const refusal = connectRefusal(a, hostname, allowed);
          if (refusal) return callback(refusal, "", 4);
        }
        callback(null, address, family);
      },
    );
  }) as unknown as Lookup;
}

type CreateConnection = (
  options: net.TcpNetConnectOpts & { host?: string },
  listener?: (err: Error | null, socket: net.Socket) => void,
) => net.Socket;

/**
 * request-filtering-agent checks connected addresses with ipaddr.js's `unicast` range only,
 * which lets IPv4-compatible IPv6 (`::7f00:1`, i.e. 127.0.0.1) through: svc's classification
 * (`addressRefusal`) runs first, on IP literals and on every DNS answer.
 */
function guarded<T extends new (...args: any[]) => http.Agent>(Base: T, allowed: readonly string[]) {
  return class extends Base {
    createConnection(
      options: net.TcpNetConnectOpts & { host?: string },
      listener?: (err: Error | null, socket: net.Socket) => void,
    ): net.Socket {
      const host = options.host ?? "";
      const refusal = net.isIP(host) ? connectRefusal(host, host, allowed) : undefined;
      if (refusal) {
        const socket = new net.Socket();
        if (listener) listener(refusal, socket);
        else socket.destroy(refusal);
        return socket;
      }
      const parent = (Base.prototype as unknown as { createConnection: CreateConnection }).createConnection;
      return parent.call(this, { ...options, lookup: guardedLookup(allowed, options.lookup) }, listener);
    }
  };
}

/** One agent per scheme and allow list, kept alive: webhook deliveries reuse connections. */
export function agentFor(url: URL, allow: OutboundAllow = outboundAllow()): http.Agent {
  const allowIPAddressList = agentAllowList(url, allow);
  const key = `${url.protocol}|${allowIPAddressList.join(",")}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, allowPrivateIPAddress: false, allowMetaIPAddress: false, allowIPAddressList };
    agent =
      url.protocol === "https:"
        ? new (guarded(RequestFilteringHttpsAgent, allowIPAddressList))(options)
        : new (guarded(RequestFilteringHttpAgent, allowIPAddressList))(options);
    agents.set(key, agent);
  }
  return agent;
}

/** The checks a URL must pass before a hop is attempted; the agent then checks the connected address. */
export function checkHop(url: URL, requireHttps: boolean, allow: OutboundAllow = outboundAllow()): void {
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new OutboundRefused(`Only http and https URLs are called, not ${url.protocol}.`);
  if (url.username || url.password) throw new OutboundRefused(`URLs carrying credentials are refused (${url.host}).`);
  if (requireHttps && url.protocol === "http:" && !isAllowListed(url, allow)) {
    throw new OutboundRefused(`${url.origin} must use https; plain http is only for hosts in SVC_OUTBOUND_ALLOW.`);
  }
  const refusal = literalRefusal(url, allow);
  if (refusal) throw new OutboundRefused(`Refused ${url.origin}: ${refusal}.`);
}

function translate(error: unknown, url: URL): Error {
  if (error instanceof OutboundError) return error;
  const e = error as NodeJS.ErrnoException;
  // request-filtering-agent's refusals are plain Errors; their wording is the only mark they carry.
  if (/ is not allowed\. Because/.test(e.message ?? "")) {
    return new OutboundRefused(
      `Refused ${url.origin}: it resolves to an address that is not public and not in SVC_OUTBOUND_ALLOW (${e.message}).`,
      { cause: e },
    );
  }
  return new OutboundFailed(`${url.origin} could not be reached: ${e.code ? `${e.code} ` : ""}${e.message}`, {
    cause: e,
  });
}

/** One call's deadline and abort signal, shared by its hops. */
class CallControl {
  stopped: unknown;
  private live: { destroy(error?: Error): unknown }[] = [];
  private timer: NodeJS.Timeout;
  private onAbort = () => this.stop(this.signal?.reason);

  constructor(
    timeoutMs: number,
    private signal?: AbortSignal,
  ) {
    this.timer = setTimeout(
      () => this.stop(new OutboundTimeout(`No complete answer within ${timeoutMs} ms.`)),
      timeoutMs,
    );
    if (signal?.aborted) this.stopped = signal.reason;
    signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  private stop(reason: unknown): void {
    this.stopped ??= reason;
    for (const stream of this.live) stream.destroy(reason instanceof Error ? reason : new Error(String(reason)));
  }

  send(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: Uint8Array | undefined,
    agent: http.Agent,
    retried = false,
  ): Promise<http.IncomingMessage> {
    if (this.stopped !== undefined) return Promise.reject(this.stopped);
    return new Promise((resolve, reject) => {
      const lib = url.protocol === "https:" ? https : http;
      let answered = false;
      const req = lib.request(url, { method, headers, agent }, (res) => {
        answered = true;
        this.live.push(res);
        resolve(res);
      });
      this.live.push(req);
      req.on("error", (e: NodeJS.ErrnoException) => {
        // A kept-alive connection the peer closed while it sat idle fails on its first write: that
        // is the pool's staleness, not the endpoint's answer. Send once more on a fresh connection
        // (receivers deduplicate on webhook-id), as Node's documentation advises.
        if (
          !retried &&
          !answered &&
          this.stopped === undefined &&
          req.reusedSocket &&
          (e.code === "ECONNRESET" || e.code === "EPIPE")
        ) {
          this.send(url, method, headers, body, agent, true).then(resolve, reject);
          return;
        }
        reject(this.stopped ?? translate(e, url));
      });
      req.end(body);
    });
  }

  read(res: http.IncomingMessage, maxBytes: number, url: URL): Promise<{ body: Buffer; truncated: boolean }> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      res.on("data", (chunk: Buffer) => {
        if (done) return;
        if (size + chunk.length > maxBytes) {
          chunks.push(chunk.subarray(0, maxBytes - size));
          done = true;
          res.destroy();
          resolve({ body: Buffer.concat(chunks), truncated: true });
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      res.on("end", () => {
        done = true;
        resolve({ body: Buffer.concat(chunks), truncated: false });
      });
      res.on("error", (e) => reject(this.stopped ?? translate(e, url)));
      res.on("close", () => {
        if (!done)
          reject(
            this.stopped ?? new OutboundFailed(`${url.origin} closed the connection before the answer was complete.`),
          );
      });
    });
  }

  close(): void {
    clearTimeout(this.timer);
    this.signal?.removeEventListener("abort", this.onAbort);
  }
}

/**
 * Calls `target` through the guard. Throws OutboundRefused (`outbound_refused`) for a destination
 * it will not call, OutboundTimeout (`outbound_timeout`) past `timeoutMs`, OutboundFailed
 * (`outbound_failed`) when the destination cannot be reached; any HTTP status is an answer.
 */
export function outboundRequest(target: string | URL, options: OutboundOptions = {}): Promise<OutboundResponse> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return request(target, options);
  }
  // Its span, and the W3C trace context sent with it (webhooks, callbacks, connectors, model providers).
  return inOutboundSpan((options.method ?? "GET").toUpperCase(), url, async (trace, span) => {
    const answer = await request(url, { ...options, headers: { ...trace, ...options.headers } });
    span.setAttribute("http.response.status_code", answer.status);
    return answer;
  });
}

async function request(target: string | URL, options: OutboundOptions): Promise<OutboundResponse> {
  const {
    timeoutMs = 10_000,
    maxBytes = 64 * 1024,
    maxRedirects = 3,
    redirect = "follow",
    requireHttps = false,
  } = options;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new OutboundRefused("The URL cannot be parsed.");
  }
  let method = (options.method ?? "GET").toUpperCase();
  let headers: Record<string, string> = { "user-agent": "svc" };
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  let body = typeof options.body === "string" ? Buffer.from(options.body) : options.body;
  const allow = outboundAllow();
  const started = performance.now();
  const control = new CallControl(timeoutMs, options.signal);
  try {
    for (let redirects = 0; ; redirects++) {
      checkHop(url, requireHttps, allow);
      const sent = body ? { ...headers, "content-length": String(body.byteLength) } : headers;
      const res = await control.send(url, method, sent, body, agentFor(url, allow));
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (redirect === "follow" && REDIRECT_STATUSES.has(status) && location) {
        res.destroy();
        if (redirects >= maxRedirects)
          throw new OutboundRefused(`More than ${maxRedirects} redirects, the last from ${url.origin}.`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new OutboundRefused(`${url.origin} redirected to an unparsable location.`);
        }
        if (next.origin !== url.origin)
          headers = Object.fromEntries(
            Object.entries(headers).filter(([name]) => !CROSS_ORIGIN_DROPPED.includes(name)),
          );
        if ((status === 303 && method !== "HEAD") || ((status === 301 || status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
          headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !BODY_HEADERS.includes(name)));
        }
        url = next;
        continue;
      }
      const read = await control.read(res, maxBytes, url);
      return {
        status,
        headers: res.headers,
        ...read,
        url: url.toString(),
        redirects,
        durationMs: Math.round(performance.now() - started),
      };
    }
  } finally {
    control.close();
  }
}
