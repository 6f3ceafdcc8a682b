import { domainError } from "../errors";
import { outboundRequest } from "../outbound/outboundRequest";

/** The HTTP request one connector action makes, as its definition declares it (api-contract "Connector definitions"). */
export interface ActionRequest {
  method: string;
  /** Relative to the API base URL; `{name}` segments are filled from the input. */
  path: string;
}

export interface ExecuteActionInput {
  action: ActionRequest;
  input: Record<string, unknown>;
  /** The connector's API base URL, or the installation's override (how tests reach a loopback provider). */
  baseUrl: string;
  /** Headers the connector sends with every action (its definition's `api_headers`, never a credential). */
  headers?: Record<string, string>;
  /** The installation's OAuth access token; absent for connectors that need no OAuth. */
  accessToken?: string | null;
  timeoutMs: number;
  /** The answer is cut at this many bytes; a cut answer is not parsed (`truncated`). */
  maxBytes: number;
  signal?: AbortSignal;
}

export interface ActionOutcome {
  /** The provider's HTTP status. */
  status: number;
  /** The answer's JSON, or its text when it is not JSON; null when empty or cut. */
  result: unknown;
  /** The answer was over `maxBytes` and was dropped after that many bytes. */
  truncated: boolean;
  durationMs: number;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/**
 * The URL an action calls: its `{name}` segments filled from the input (percent-encoded, so an
 * input cannot add a path segment or a query), the remaining input returned for the query or
 * body. A value of `.` or `..` is refused: the URL parser would resolve it and let an input walk
 * the path to an endpoint the action does not name. The result stays under `baseUrl`.
 */
export function actionUrl(
  baseUrl: string,
  path: string,
  input: Record<string, unknown>,
): { url: URL; rest: Record<string, unknown> } {
  const rest: Record<string, unknown> = { ...input };
  const filled = path.replace(PLACEHOLDER, (_, name: string) => {
    const value = input[name];
    if (value === undefined || value === null || typeof value === "object") {
      throw domainError("validation_failed", `The action's path needs \`${name}\` (a string or number).`, {
        errors: [{ field: `input.${name}`, code: "REQUIRED_FIELD_MISSING", message: "Needed in the request path." }],
      });
    }
    const text = String(value);
    if (text === "" || text === "." || text === "..") {
      throw domainError("validation_failed", `\`${name}\` cannot be empty, "." or "..".`, {
        errors: [
          { field: `input.${name}`, code: "INVALID_VALUE", message: "Not a usable path segment.", received: text },
        ],
      });
    }
    delete rest[name];
    return encodeURIComponent(text);
  });
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, "");
  const url = new URL(`${basePath}${filled.startsWith("/") ? "" : "/"}${filled}`, base.origin);
  for (const [name, value] of base.searchParams) url.searchParams.append(name, value);
  return { url, rest };
}

/** A query string value: arrays repeat the name, objects travel as JSON, null is left out. */
function appendQuery(url: URL, input: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(name, typeof item === "object" ? JSON.stringify(item) : String(item));
    }
  }
}

function parseAnswer(body: Buffer, contentType: string | undefined): unknown {
  if (body.byteLength === 0) return null;
  const text = body.toString("utf8");
  if (contentType && !/json/i.test(contentType)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Runs one connector action: the generic executor every connector shares. The call goes through
 * the SSRF guard (server/outbound), so a base URL that is or resolves to a private address is
 * refused unless SVC_OUTBOUND_ALLOW lists it, with the call's time limit and a cap on the answer:
 * a provider that answers 50 MB costs svc `maxBytes` of memory, and the cut answer is reported,
 * never half-parsed. Redirects are not followed: the bearer token is for the provider's API alone.
 * Any HTTP status is an outcome; only an unreachable, refused or timed-out provider throws
 * (OutboundError).
 */
export async function executeAction(call: ExecuteActionInput): Promise<ActionOutcome> {
  const method = call.action.method.toUpperCase();
  const { url, rest } = actionUrl(call.baseUrl, call.action.path, call.input);
  const headers: Record<string, string> = { accept: "application/json", ...call.headers };
  if (call.accessToken) headers.authorization = `Bearer ${call.accessToken}`;
  let body: string | undefined;
  if (BODY_METHODS.has(method)) {
    body = JSON.stringify(rest);
    headers["content-type"] = "application/json";
  } else {
    appendQuery(url, rest);
  }
  const answer = await outboundRequest(url, {
    method,
    headers,
    body,
    timeoutMs: call.timeoutMs,
    maxBytes: call.maxBytes,
    redirect: "manual",
    signal: call.signal,
  });
  const contentType = answer.headers["content-type"];
  return {
    status: answer.status,
    result: answer.truncated ? null : parseAnswer(answer.body, contentType),
    truncated: answer.truncated,
    durationMs: answer.durationMs,
  };
}
