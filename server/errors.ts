import { outageKind, reportOutage, RETRY_AFTER_SECONDS } from "./db/outage";
import { errorEntry, type AreaErrorCode, type ErrorCode } from "./errorCatalogue";

/**
 * Typed domain errors. Services throw these; the governance gate maps them to problem+json for
 * /v1 and to tRPC error codes for the console. Nothing else is shown to a caller: an unexpected
 * error becomes a 500 with an incident id and no stack trace.
 */
export interface FieldError {
  field: string;
  code: string;
  message: string;
  expected?: string;
  received?: string;
}

export interface RemediationStep {
  step: number;
  description: string;
  link?: string;
}

export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    detail: string,
    readonly extra: {
      errors?: FieldError[];
      remediation?: RemediationStep[];
      headers?: Record<string, string>;
      [key: string]: unknown;
    } = {},
  ) {
    super(detail);
  }
}

/**
 * A problem of a catalogued code (server/errorCatalogue.ts): status, title and remediation come
 * from the catalogue, so a factory cannot invent a code that /docs/errors does not explain.
 * `status` overrides the catalogue's only with one of the entry's other statuses.
 */
export function domainError(
  code: ErrorCode | AreaErrorCode,
  detail: string,
  extra: DomainError["extra"] = {},
  status?: number,
): DomainError {
  const entry = errorEntry(code);
  const remediation = entry.remediation?.map((description, i) => ({ step: i + 1, description }));
  return new DomainError(status ?? entry.status, code, entry.title, detail, {
    ...(remediation ? { remediation } : {}),
    ...extra,
  });
}

export const ValidationFailed = (errors: FieldError[], detail = "The request did not pass validation.") =>
  domainError("validation_failed", detail, { errors });

/**
 * 401. Without credentials (no or a malformed Authorization header) the catalogue's remediation
 * says how to send one; a token that was sent and refused (revoked, expired, not signed here) is
 * told to use or mint another, since sending the header again changes nothing.
 */
export const Unauthenticated = (
  detail: string,
  cause: "no_credentials" | "credential_refused" = "credential_refused",
) =>
  domainError(
    "unauthenticated",
    detail,
    cause === "no_credentials"
      ? {}
      : {
          remediation: [
            {
              step: 1,
              description:
                "This token can no longer be used (see the detail): use another API key or delegation token, or create a new one in the console under API keys or with `npx svc keys create`. A session token derived from a revoked or expired key needs a new key first.",
            },
          ],
        },
  );

/**
 * 403. Its remediation fits the refusal: a missing capability (`missing_capability`) is what an
 * administrator's delegation can give; any other refusal (deciding one's own approval, an agent
 * run deciding, an organization setting what its creator sets…) is about who acts or what is
 * asked, which no delegation changes, and the remediation says so instead of sending the caller
 * to an administrator for nothing.
 */
export const Forbidden = (detail: string, extra: Record<string, unknown> = {}) =>
  domainError("forbidden", detail, {
    remediation: [
      {
        step: 1,
        description:
          typeof extra.missing_capability === "string"
            ? `Ask an administrator of your organization for a delegation that covers ${extra.missing_capability}.`
            : "A wider delegation would not change this refusal: the detail says who may do this, or what to change in the request.",
      },
    ],
    ...extra,
  });

export const NotFound = (what: string, id: string) =>
  domainError("not_found", `No ${what} with id ${JSON.stringify(id)}.`);

export const Conflict = (detail: string, extra: Record<string, unknown> = {}) => domainError("conflict", detail, extra);

/** An illegal state transition: the problem names the current and the requested state. */
export const IllegalTransition = (what: string, current: string, requested: string) =>
  domainError("illegal_state_transition", `The ${what} is ${current} and cannot become ${requested}.`, {
    current_state: current,
    requested_state: requested,
  });

/** A path no API route serves. */
export const RouteNotFound = (path: string) => domainError("not_found", `No API route ${path}. See /v1/openapi.json.`);

/** A route that exists but not for this method; `Allow` lists the ones it answers. */
export const MethodNotAllowed = (method: string, path: string, allow: readonly string[]) =>
  domainError("method_not_allowed", `${method} is not allowed on ${path}.`, { headers: { Allow: allow.join(", ") } });

export const PayloadTooLarge = (limit?: number) =>
  domainError(
    "payload_too_large",
    limit === undefined ? "The body is too large." : `The body exceeds the limit of ${limit} bytes.`,
  );

export const UnsupportedMediaType = (contentType: string | null, detail?: string) =>
  domainError(
    "unsupported_media_type",
    detail ??
      `Send the body as application/json (got ${contentType ? JSON.stringify(contentType) : "no Content-Type"}).`,
  );

export const IdempotencyKeyReused = () =>
  domainError(
    "idempotency_key_reused",
    "This Idempotency-Key was already used with a different request. Use a new key for a new request.",
  );

/** Rate limited; with `retryAfter` the problem says how long to wait and carries `Retry-After`. */
export const RateLimited = (detail: string, retryAfter?: number) =>
  domainError(
    "rate_limited",
    detail,
    retryAfter === undefined
      ? {}
      : {
          remediation: [
            {
              step: 1,
              description: `Wait ${retryAfter} seconds (Retry-After) before retrying, and spread requests over time.`,
            },
          ],
          headers: { "Retry-After": String(retryAfter) },
        },
  );

/** The ledger has no checkpoint yet: a fresh service signs its first one within a second. */
export const NoCheckpointYet = () =>
  domainError("no_checkpoint_yet", "The ledger has not signed a checkpoint yet; retry in a second.", {
    headers: { "Retry-After": "1" },
  });

export const NotYetCheckpointed = () =>
  domainError("not_yet_checkpointed", "The record is newer than the latest checkpoint; retry in a second.", {
    headers: { "Retry-After": "1" },
  });

/** A refused passkey ceremony; `code` narrows why (the docs explain each). */
export const PasskeyRefused = (
  detail: string,
  status?: number,
  code: Extract<
    ErrorCode,
    | "passkey_refused"
    | "challenge_reused"
    | "challenge_expired"
    | "counter_replayed"
    | "member_revoked"
    | "invite_invalid"
    | "invite_used"
    | "invite_expired"
    | "invite_superseded"
  > = "passkey_refused",
) => domainError(code, detail, {}, status);

/**
 * The one mapping from anything thrown to a DomainError, used by the gate (the recorded status),
 * the /v1 adapter (problem+json) and the tRPC middleware, so the three can never disagree.
 * Database errors a caller can cause (a unique key taken by a concurrent request, a serialization
 * failure) are conflicts, not failures; the database going away or filling up is a 503 outage
 * (`database_unavailable`, `storage_full`); anything else unexpected is a 500 `internal_error`.
 */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "P2002")
    return domainError(
      "conflict",
      "A resource with the same unique key already exists (possibly created by a concurrent request).",
    );
  if (code === "P2034") return domainError("conflict", "The request conflicted with a concurrent change; retry it.");
  const outage = outageKind(error);
  if (outage) {
    // An outage, not a bug: 503 with Retry-After, logged once for the whole outage (no incident).
    reportOutage(outage, error);
    const retryAfter = RETRY_AFTER_SECONDS[outage];
    const detail =
      outage === "storage_full"
        ? "The database has no room left to write; nothing of this call was committed."
        : "The database cannot be reached right now; nothing of this call was committed.";
    return domainError(outage, `${detail} Retry in ${retryAfter} s.`, {
      headers: { "Retry-After": String(retryAfter) },
    });
  }
  return domainError(
    "internal_error",
    "The service failed to complete this request. Quote the incident id when you report it.",
  );
}
