import type { operations, paths } from "./generated/openapi.js";
import { ROUTES } from "./generated/routes.js";
import { SvcProblemError, type SvcProblem } from "./errors.js";

/* ── Types: every call is typed from the OpenAPI document's generated types ── */

type IsNever<T> = [T] extends [never] ? true : false;
type Defined<T> = Exclude<T, undefined>;
type HttpMethod = "get" | "put" | "post" | "delete" | "patch";

/** The operation ids of the document (`listPassports`, `getPassport`, …). */
export type OperationId = keyof operations & keyof typeof ROUTES;

type PathParamsOf<O> = O extends { parameters: { path: infer P } } ? Defined<P> : never;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? Defined<Q> : never;
type BodyOf<O> = O extends { requestBody?: infer R }
  ? Defined<R> extends { content: infer C }
    ? C[keyof C]
    : never
  : never;
type ContentOf<R> = R extends { content: infer C } ? C[keyof C] : undefined;
type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206;

/** The body of an operation's success answer (`undefined` for 204). */
export type SuccessOf<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends SuccessStatus ? ContentOf<R[S]> : never }[keyof R]
  : never;

/** Per-call options besides the operation's parameters. */
export interface CallOptions {
  /** The Idempotency-Key of a POST (default: a new UUID per call, kept across its retries). */
  idempotencyKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

type PathPart<O> = IsNever<PathParamsOf<O>> extends true ? { path?: undefined } : { path: PathParamsOf<O> };
type QueryPart<O> =
  IsNever<QueryOf<O>> extends true
    ? { query?: undefined }
    : {} extends QueryOf<O>
      ? { query?: QueryOf<O> }
      : { query: QueryOf<O> };
type BodyPart<O> =
  IsNever<BodyOf<O>> extends true
    ? { body?: undefined }
    : O extends { requestBody: unknown }
      ? { body: BodyOf<O> }
      : { body?: BodyOf<O> };

/** What a call takes: `path` and `query` parameters and the JSON `body`, as the document declares them. */
export type RequestOptions<O> = PathPart<O> & QueryPart<O> & BodyPart<O> & CallOptions;
type Args<O> = {} extends RequestOptions<O> ? [options?: RequestOptions<O>] : [options: RequestOptions<O>];

type PathsWith<M extends HttpMethod> = {
  [P in keyof paths]: IsNever<Defined<paths[P][M & keyof paths[P]]>> extends true ? never : P;
}[keyof paths];
type OperationAt<P extends keyof paths, M extends HttpMethod> = Defined<paths[P][M & keyof paths[P]]>;

/** One named, typed function per operation of the document. */
export type NamedOperations = {
  [K in OperationId]: (...args: Args<operations[K]>) => Promise<SuccessOf<operations[K]>>;
};

/** The items of a list operation's page: `data[]` (or `data.agents[]` for the agents list). */
type ItemsOf<B> = B extends { data: (infer T)[] } ? T : B extends { data: { agents: (infer T)[] } } ? T : never;
/** Operations that answer a page with a cursor. */
export type ListOperationId = {
  [K in OperationId]: IsNever<ItemsOf<SuccessOf<operations[K]>>> extends true
    ? never
    : "cursor" extends keyof QueryOf<operations[K]>
      ? K
      : never;
}[OperationId];
export type ItemOf<K extends ListOperationId> = ItemsOf<SuccessOf<operations[K]>>;

/* ── The client ── */

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  retries?: number;
  /** The first wait, doubled at each retry, with jitter (default 250 ms). */
  baseDelayMs?: number;
  /** The longest wait, `Retry-After` included (default 10 s). */
  maxDelayMs?: number;
}

export interface SvcClientOptions {
  /** The service's address, e.g. `https://svc.example.com` (no `/v1`). */
  baseUrl: string;
  /** An API key or delegation token, or a function giving one (called before every attempt). */
  token?: string | (() => string | Promise<string>);
  retry?: RetryOptions;
  /** Headers added to every call. */
  headers?: Record<string, string>;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

interface RawOptions extends CallOptions {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
}

export class SvcClient {
  /** Every operation by its id: `svc.ops.getPassport({ path: { did } })`. */
  readonly ops: NamedOperations;
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: SvcClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? ((...a) => globalThis.fetch(...a));
    const ops: Record<string, (o?: RawOptions) => Promise<unknown>> = {};
    for (const [id, [method, path]] of Object.entries(ROUTES)) ops[id] = (o) => this.send(method, path, o);
    this.ops = ops as unknown as NamedOperations;
  }

  GET<P extends PathsWith<"get">>(path: P, ...args: Args<OperationAt<P, "get">>) {
    return this.send("GET", path, args[0] as RawOptions) as Promise<SuccessOf<OperationAt<P, "get">>>;
  }
  POST<P extends PathsWith<"post">>(path: P, ...args: Args<OperationAt<P, "post">>) {
    return this.send("POST", path, args[0] as RawOptions) as Promise<SuccessOf<OperationAt<P, "post">>>;
  }
  PUT<P extends PathsWith<"put">>(path: P, ...args: Args<OperationAt<P, "put">>) {
    return this.send("PUT", path, args[0] as RawOptions) as Promise<SuccessOf<OperationAt<P, "put">>>;
  }
  PATCH<P extends PathsWith<"patch">>(path: P, ...args: Args<OperationAt<P, "patch">>) {
    return this.send("PATCH", path, args[0] as RawOptions) as Promise<SuccessOf<OperationAt<P, "patch">>>;
  }
  DELETE<P extends PathsWith<"delete">>(path: P, ...args: Args<OperationAt<P, "delete">>) {
    return this.send("DELETE", path, args[0] as RawOptions) as Promise<SuccessOf<OperationAt<P, "delete">>>;
  }

  /**
   * Every item of a list operation, page after page (following `next_cursor`), as an async
   * iterator: `for await (const p of svc.paginate("listPassports", { query: { limit: 100 } }))`.
   */
  async *paginate<K extends ListOperationId>(
    operation: K,
    ...args: Args<operations[K]>
  ): AsyncGenerator<ItemOf<K>, void, undefined> {
    const [method, path] = ROUTES[operation];
    const first = (args[0] ?? {}) as RawOptions;
    let cursor: string | undefined;
    do {
      const page = (await this.send(method, path, {
        ...first,
        query: { ...first.query, ...(cursor ? { cursor } : {}) },
      })) as { data: unknown; pagination?: { next_cursor?: string | null } };
      const data = page.data as unknown[] | { agents: unknown[]; next_cursor?: string | null };
      const items = Array.isArray(data) ? data : data.agents;
      for (const item of items) yield item as ItemOf<K>;
      cursor = (Array.isArray(data) ? page.pagination?.next_cursor : data.next_cursor) ?? undefined;
    } while (cursor);
  }

  private url(pathTemplate: string, path: Record<string, unknown> = {}, query: Record<string, unknown> = {}): string {
    const filled = pathTemplate.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = path[name];
      if (value === undefined || value === null)
        throw new TypeError(`${pathTemplate}: the path parameter ${name} is missing`);
      return encodeURIComponent(String(value));
    });
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) search.append(k, String(item));
    }
    const qs = search.toString();
    return `${this.baseUrl}${filled}${qs ? `?${qs}` : ""}`;
  }

  /**
   * One call, retried on a network failure and on 429, 502, 503 and 504 (after `Retry-After`
   * when given). A POST carries an Idempotency-Key, the same on every attempt, so a retried write
   * whose first attempt did reach the service is answered with that first answer instead of being
   * made twice. PATCH is retried only on an answer that says it was not processed (429, 503).
   */
  private async send(method: string, pathTemplate: string, o: RawOptions = {}): Promise<unknown> {
    const url = this.url(pathTemplate, o.path, o.query);
    const retry = this.options.retry ?? {};
    const retries = retry.retries ?? 3;
    const base = retry.baseDelayMs ?? 250;
    const max = retry.maxDelayMs ?? 10_000;
    const idempotencyKey = method === "POST" ? (o.idempotencyKey ?? crypto.randomUUID()) : undefined;
    const resendable = method !== "PATCH";
    for (let attempt = 0; ; attempt++) {
      const token =
        typeof this.options.token === "function" ? await this.options.token() : (this.options.token ?? undefined);
      const headers: Record<string, string> = {
        Accept: "application/json, application/problem+json, text/plain;q=0.5, */*;q=0.1",
        ...this.options.headers,
        ...o.headers,
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {}),
        ...(o.body !== undefined ? { "Content-Type": "application/json" } : {}),
      };
      const wait = (retryAfter?: number) =>
        sleep(
          Math.min(max, retryAfter !== undefined ? retryAfter * 1000 : base * 2 ** attempt * (0.5 + Math.random())),
          o.signal,
        );
      let res: Response;
      try {
        res = await this.fetchImpl(url, {
          method,
          headers,
          body: o.body !== undefined ? JSON.stringify(o.body) : undefined,
          signal: o.signal,
        });
      } catch (e) {
        if (o.signal?.aborted || attempt >= retries || !resendable) throw e;
        await wait();
        continue;
      }
      if (res.ok) return parseBody(res);
      const error = new SvcProblemError(await problemOf(res), res);
      const notProcessed = res.status === 429 || res.status === 503;
      // A replayed answer (the same Idempotency-Key) is the first attempt's outcome: asking again repeats it.
      const replayed = res.headers.get("idempotent-replayed") === "true";
      if (attempt < retries && !replayed && RETRYABLE_STATUS.has(res.status) && (resendable || notProcessed)) {
        await wait(error.retryAfter);
        continue;
      }
      throw error;
    }
  }
}

async function parseBody(res: Response): Promise<unknown> {
  if (res.status === 204) return undefined;
  const type = res.headers.get("content-type") ?? "";
  const text = await res.text();
  if (/^application\/([a-z0-9.+-]+\+)?json\b/i.test(type)) {
    if (!text) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      // An answer cut short or mangled on its way (a proxy's error page labelled JSON) is a failed call, not a SyntaxError.
      throw new SvcProblemError(
        {
          type: "about:blank",
          title: "Malformed response",
          status: res.status,
          detail: `The ${res.status} answer is labelled ${type} but is not valid JSON (${(e as Error).message}): ${text.slice(0, 200)}`,
        },
        res,
      );
    }
  }
  if (/^application\/x-ndjson\b/i.test(type)) return text;
  return text;
}

async function problemOf(res: Response): Promise<SvcProblem> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text) as Partial<SvcProblem>;
    if (body && typeof body.type === "string" && typeof body.title === "string")
      return { ...body, status: body.status ?? res.status } as SvcProblem;
  } catch {
    // not JSON: described below
  }
  return {
    type: "about:blank",
    title: res.statusText || `HTTP ${res.status}`,
    status: res.status,
    detail: text.slice(0, 500) || undefined,
  };
}

/** A client of svc's /v1 API. */
export function createSvcClient(options: SvcClientOptions): SvcClient {
  return new SvcClient(options);
}
