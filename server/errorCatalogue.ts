import { processWide } from "./processWide";

/**
 * Every problem type svc answers with, declared once. The error factories (server/errors.ts), the
 * `/docs/errors` page and the OpenAPI document's problem responses are all generated from this
 * table, so a `type` link in a problem always resolves to an entry here. A new error code is a new
 * entry: the `ErrorCode` type then lets the factories use it, and a unit test fails if a code is
 * thrown anywhere in the code base without one.
 */
export interface ErrorEntry {
  /** The HTTP status the problem is answered with. */
  status: number;
  /** The other statuses the same code may carry (a passkey refusal is 400 on registration, 401 on sign-in). */
  otherStatuses?: readonly number[];
  /** The problem's `title`. */
  title: string;
  /** What it means, for the docs (`/docs/errors`) and the OpenAPI response descriptions. */
  description: string;
  /** What the caller does about it, for the docs. */
  fix: string;
  /** Steps sent in the problem's `remediation[]` (only where a caller can act on them without reading the docs). */
  remediation?: readonly string[];
}

export const ERROR_CATALOGUE = {
  validation_failed: {
    status: 400,
    title: "Validation failed",
    description:
      "The path, query or body did not pass validation. `errors[]` lists each field with a machine code: REQUIRED_FIELD_MISSING, INVALID_TYPE, INVALID_ENUM, OUT_OF_RANGE, INVALID_FORMAT, INVALID_CURSOR, UNKNOWN_FIELD (also any body sent to an operation that takes none, and a field named `__proto__`), CONFLICTING_FIELDS, MALFORMED_JSON (also a body that is not valid UTF-8), UNKNOWN_PASSPORT, UNKNOWN_CHECKPOINT, HASH_MISMATCH (a deployed bundle whose bytes do not match bundleHash), TRIGGER_NOT_DECLARED (a manifest `on` entry without its event_trigger capabilities), RESERVED_EVENT_TYPE (an ingested or emitted event of a platform type, which only svc raises); for workflow definitions WORKFLOW_CYCLE, DANGLING_EDGE, DUPLICATE_NODE_ID, DUPLICATE_EDGE, INVALID_EDGE_TYPE, MULTIPLE_ROOTS, JOIN_WITHOUT_FORK, CONDITION_BRANCHES, FORK_BRANCHES, INVALID_CONDITION, UNKNOWN_OPERATION, each naming the node (`nodes[i]`) or edge (`edges[i]`). For enum, literal and format errors `received` shows (the start of) the value that was sent.",
    fix: "Correct the fields named in errors[] and send the request again.",
  },
  unauthenticated: {
    status: 401,
    title: "Authentication required",
    description:
      "The token is missing, malformed, not signed by this service, expired, or its delegation (or one it derives from) was revoked.",
    fix: "Send `Authorization: Bearer <token>` with a valid API key or delegation token.",
    remediation: [
      "Include an Authorization header with a valid API token: `Authorization: Bearer <API_KEY>`. Create one in the console under API keys, or with the `npx svc keys create` command the server printed at start (it names the server's DATA_DIR / DATABASE_URL when they are not the defaults; the CLI says which database it uses).",
    ],
  },
  forbidden: {
    status: 403,
    title: "Forbidden",
    description:
      "The token is valid but its delegation does not cover the operation (`missing_capability` names it), a delegation would exceed its grantor's capabilities or lifetime, or a cross-site request reached the console API.",
    fix: "Ask an administrator for a delegation that covers the capability. A refused approval decision says why in `reason` and is not fixed by another delegation: `own_request` (the decider's chain passes through the requester's delegation, the requester's through the decider's, or the same person or agent stands behind both, a console API key counting as the member who minted it), `agent_chain` (the decider's chain passes through a delegation issued to an agent passport: an agent may ask, never decide), `agent_decider` (an agent run), `not_assigned` (other approvers, or a console role the decider is not a member of): ask a person who holds svc_api:approvals:respond, and who neither asked nor granted the asker its authority, to decide.",
    remediation: ["Ask an administrator of your organization for a delegation that covers this operation."],
  },
  tier_too_low: {
    status: 403,
    title: "Tier too low",
    description:
      "The session exchange required a verification or identity tier the passport does not have (`tier`, `actual_tier`, `required_tier`).",
    fix: "An organization administrator raises the passport's tier with PATCH /v1/passports/{did}.",
  },
  not_found: {
    status: 404,
    title: "Not found",
    description:
      "No such resource in your organization (resources of other organizations are reported the same way), or no such API route.",
    fix: "Check the id and the path (see /v1/openapi.json), and that you are using the right organization's token.",
  },
  method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    description:
      "The route exists but does not answer this HTTP method. The `Allow` header lists the methods it does answer.",
    fix: "Use one of the methods in the `Allow` header.",
  },
  outbound_refused: {
    status: 400,
    title: "Outbound request refused",
    description:
      "An outbound URL (callback, webhook, OAuth, connector or model provider) is not http/https, carries credentials, needs https, or is or resolves to a non-public address not listed in SVC_OUTBOUND_ALLOW, possibly through a redirect. Checked after DNS and on every redirect.",
    fix: "Use a public https URL, or ask the operator to list the host:port or CIDR in SVC_OUTBOUND_ALLOW.",
  },
  outbound_timeout: {
    status: 504,
    title: "Outbound request timed out",
    description: "The remote endpoint did not answer (headers and body) within the outbound time limit.",
    fix: "Make the endpoint answer faster; deliveries are retried on their schedule.",
  },
  outbound_failed: {
    status: 502,
    title: "Outbound request failed",
    description:
      "The outbound call failed: DNS, connection refused or reset, TLS verification, or an answer too large.",
    fix: "Check that the endpoint is reachable with a valid certificate and answers within the size limit.",
  },
  conflict: {
    status: 409,
    title: "Conflict",
    description:
      "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
    fix: "Use the existing resource, or change the unique field.",
  },
  illegal_state_transition: {
    status: 409,
    title: "Illegal state transition",
    description: "The resource's state does not allow the requested change (`current_state`, `requested_state`).",
    fix: "Read the resource's current state first.",
  },
  no_checkpoint_yet: {
    status: 409,
    title: "No checkpoint yet",
    description:
      "The ledger has not signed its first checkpoint yet (a fresh service signs one within a second of its first record), so there is nothing to prove against.",
    fix: "Retry after the `Retry-After` seconds.",
  },
  not_yet_checkpointed: {
    status: 409,
    title: "Not yet checkpointed",
    description: "The record is newer than the latest signed checkpoint, so no inclusion proof exists for it yet.",
    fix: "Retry after the `Retry-After` seconds, or ask for a proof against a later `tree_size`.",
  },
  payload_too_large: {
    status: 413,
    title: "Payload too large",
    description:
      "The body is larger than SVC_MAX_BODY_BYTES (1 MiB by default; 64 KB on the console's passkey routes).",
    fix: "Send a smaller body.",
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    description: "The body is not declared as JSON, or declares a charset other than UTF-8 (JSON is UTF-8).",
    fix: "Send `Content-Type: application/json` and the body in UTF-8.",
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    description: "The Idempotency-Key was used before with a different request.",
    fix: "Use a new key for a new request.",
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    description: "The per-minute limit for this credential (or, before sign-in, this address) and route was reached.",
    fix: "Wait for Retry-After seconds; X-RateLimit-Reset says when the window resets.",
  },
  internal_error: {
    status: 500,
    title: "Internal error",
    description: "The service failed. `incident_id` identifies the failure in the service's log.",
    fix: "Retry later and quote the incident id when you report it.",
  },
  database_unavailable: {
    status: 503,
    title: "Database unavailable",
    description:
      "The service's database cannot be reached right now (it restarted, refuses connections or dropped the connection). Nothing of the call was committed, and no incident is opened: it is an outage, logged once by the service, not a failure of the call.",
    fix: "Retry after the `Retry-After` seconds (with the same Idempotency-Key for a write); the service recovers by itself within a second of the database coming back.",
  },
  storage_full: {
    status: 503,
    title: "Storage full",
    description:
      "The service's database has no room left to write (its disk or its size limit is full). Nothing of the call was committed; reads still answer.",
    fix: "Retry after the `Retry-After` seconds; the operator frees or adds space, and the service recovers without a restart.",
  },
  passkey_step_up_required: {
    status: 403,
    title: "Passkey confirmation required",
    description:
      "A console session mints a key or delegation token that can decide approval requests or learning proposals (`capabilities` names those of the request that can: svc_api:approvals:respond, svc_api:learning:decide, or a family covering one) only with a passkey assertion made in that session at most 5 minutes old (`step_up`: `passkey`).",
    fix: "Confirm with your passkey in the console (the key form asks for it) and create the key again; or leave out the deciding capabilities.",
  },
  passkey_refused: {
    status: 400,
    otherStatuses: [401],
    title: "Passkey refused",
    description:
      "The console's passkey registration or sign-in was refused: the challenge is unknown, the key type or attestation format is not accepted, or the WebAuthn response did not verify (401 on sign-in, including a passkey not registered here).",
    fix: "Start the registration or sign-in again from the console; use a P-256 or Ed25519 passkey.",
  },
  challenge_reused: {
    status: 400,
    title: "Passkey refused",
    description: "The WebAuthn challenge was already answered: each challenge is good for one response.",
    fix: "Start the registration or sign-in again to get a new challenge.",
  },
  challenge_expired: {
    status: 400,
    title: "Passkey refused",
    description: "The WebAuthn challenge expired before it was answered.",
    fix: "Start the registration or sign-in again to get a new challenge.",
  },
  counter_replayed: {
    status: 401,
    title: "Passkey refused",
    description:
      "The passkey's signature counter did not advance: the authenticator may have been cloned, or the same response was used twice concurrently.",
    fix: "Sign in again; if it repeats, remove the passkey and register a new one.",
  },
  member_revoked: {
    status: 403,
    title: "Passkey refused",
    description: "The passkey verified, but the person's console access has been revoked.",
    fix: "Ask an administrator to restore access.",
  },
  invite_invalid: {
    status: 404,
    title: "Passkey refused",
    description: "The invitation link is not one this service issued.",
    fix: "Ask an administrator for a new invitation link.",
  },
  invite_used: {
    status: 410,
    title: "Passkey refused",
    description: "The invitation link has already been used (or set-up is already done).",
    fix: "Ask an administrator for a new invitation link.",
  },
  invite_expired: {
    status: 410,
    title: "Passkey refused",
    description: "The invitation link expired, or whoever made it no longer has access.",
    fix: "Ask an administrator for a new invitation link.",
  },
  invite_superseded: {
    status: 410,
    title: "Passkey refused",
    description:
      "The set-up link was superseded: set-up was completed with another link, so the first administrator exists.",
    fix: "Sign in with your passkey, or ask an administrator for an invitation.",
  },
} as const satisfies Record<string, ErrorEntry>;

/** The shared codes (this table); an area's own codes are `AreaErrorCode`s its contributions declare. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;
/**
 * The codes the areas declare, by name. Each area's `contributions.ts` adds its own by module
 * augmentation (`interface AreaErrorCodes extends Record<keyof typeof errors, true> {}` inside
 * `declare module "../errorCatalogue"`), so the kernel names no area's code, `domainError` takes
 * them typed, and a misspelt code fails the type check.
 */
export interface AreaErrorCodes {}
/** A code an area declares in its `server/<area>/contributions.ts` (`errors`), registered by the root. */
export type AreaErrorCode = keyof AreaErrorCodes & string;

export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

// The codes the areas declare, as the composition root registers them.
const declared = processWide("errors.areaErrorCodes", () => new Map<string, ErrorEntry>());

/**
 * Called by the composition root only: an area's own codes. A code the shared table has, or
 * another area declared, is a mistake of the root's, thrown at start.
 */
export function registerErrorCodes(entries: Readonly<Record<string, ErrorEntry>>): void {
  for (const [code, entry] of Object.entries(entries)) {
    const known = declared.get(code);
    if (Object.hasOwn(ERROR_CATALOGUE, code) || (known && known !== entry))
      throw new Error(`Error code ${code} is declared twice.`);
    declared.set(code, entry);
  }
}

/** Every code: the shared table's, then those the areas declared in the root's order. */
export function errorCodes(): string[] {
  return [...ERROR_CODES, ...declared.keys()];
}

export function isErrorCode(code: string): code is ErrorCode {
  return Object.hasOwn(ERROR_CATALOGUE, code) || declared.has(code);
}

/**
 * The entry of `code`, typed as the interface (the table itself is `as const`). A code nobody
 * declared throws: a problem must link to an entry of /docs/errors.
 */
export function errorEntry(code: string): ErrorEntry {
  const entry = Object.hasOwn(ERROR_CATALOGUE, code) ? ERROR_CATALOGUE[code as ErrorCode] : declared.get(code);
  if (!entry) throw new Error(`Error code ${code} is declared by no area (server/<area>/contributions.ts).`);
  return entry;
}

/** The codes a status may be answered with, for the OpenAPI responses. */
export function codesWithStatus(status: number): string[] {
  return errorCodes().filter((code) => {
    const entry = errorEntry(code);
    return entry.status === status || (entry.otherStatuses ?? []).includes(status);
  });
}
