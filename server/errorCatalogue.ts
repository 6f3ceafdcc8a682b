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
  connector_not_configured: {
    status: 409,
    title: "Connector not configured",
    description:
      "The connector needs OAuth and no OAuth client (client id and secret at its provider) is set for it: neither in the console for your organization, nor in SVC_CONNECTOR_<ID>_CLIENT_ID / _CLIENT_SECRET, nor in its definition.",
    fix: "An administrator sets the connector's OAuth client in the console (Marketplace → the connector → OAuth client), or the operator sets the environment variables.",
  },
  connector_connection_expired: {
    status: 409,
    title: "Connector connection expired",
    description:
      "The installation's access token expired and could not be refreshed (the provider refused the refresh token, or gave none). The installation's health is down; `connector.connection_expired` was put on the event bus when the worker's refresh failed.",
    fix: "Uninstall it and install the connector again (a new consent at the provider).",
  },
  oauth_state_invalid: {
    status: 400,
    title: "OAuth state invalid",
    description:
      "The OAuth callback's `state` is missing, unknown, already used, or older than 15 minutes (the pending installation then expired). Each authorization link works once.",
    fix: "Start the installation again to get a new authorization link.",
  },
  oauth_callback_failed: {
    status: 400,
    title: "OAuth authorization failed",
    description:
      "The provider's answer to the authorization could not complete the installation: it reported an error (say access_denied), its `iss` is not the provider's issuer (RFC 9207, a mix-up attack), the code was missing, or the code exchange failed (a wrong redirect_uri or PKCE verifier, an expired code). `reason` says which; the installation is marked expired.",
    fix: "Start the installation again; if it fails the same way, check the connector's OAuth client and redirect URI at the provider.",
  },
  conflict: {
    status: 409,
    title: "Conflict",
    description:
      "A resource with the same unique key exists (for example a passport for the same public key), possibly created by a concurrent request.",
    fix: "Use the existing resource, or change the unique field.",
  },
  installation_not_active: {
    status: 409,
    title: "Installation not active",
    description:
      "A connector invocation needs an active installation; this one is suspended, waiting for its OAuth consent, expired or uninstalled. The problem names its `current_state`.",
    fix: "Resume a suspended installation (PATCH status active), finish or restart the install, or install the connector again.",
  },
  action_not_granted: {
    status: 403,
    title: "Action not granted",
    description:
      "The connector action is not among the installation's `granted_permissions`, so it may not be invoked through this installation.",
    fix: "Add the action to the installation's granted_permissions (PATCH /v1/marketplace/installations/{id}), or use another installation.",
  },
  rating_requires_usage: {
    status: 403,
    title: "Rating needs usage",
    description:
      "Only organizations with at least one successful invocation of a connector may rate it, so ratings come from real users.",
    fix: "Install the connector and invoke one of its actions successfully, then rate it.",
  },
  illegal_state_transition: {
    status: 409,
    title: "Illegal state transition",
    description: "The resource's state does not allow the requested change (`current_state`, `requested_state`).",
    fix: "Read the resource's current state first.",
  },
  learning_target_changed: {
    status: 409,
    title: "Learning target changed",
    description:
      "A learning proposal is applied only while its target is still in the proposal's `previous` state, and rolled back only while it is still in the applied state: something else changed it since. The problem carries `current` and `expected`.",
    fix: "Read the target's state; make a new proposal from it if the change is still wanted.",
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
  event_depth_exceeded: {
    status: 403,
    title: "Event chain too deep",
    description:
      "An agent run emitted an event from a chain of events and the trigger runs they started that already reached SVC_EVENT_MAX_DEPTH (default 8): the emit is refused and recorded (denied), so a loop of agents triggering each other stops.",
    fix: "Break the loop: an agent should not emit an event type that (through other triggers) starts it again, or raise SVC_EVENT_MAX_DEPTH if the chain is meant to be that long.",
  },
  emit_budget_exhausted: {
    status: 403,
    title: "Emit budget exhausted",
    description:
      "An agent run already put SVC_RUN_EMIT_BUDGET events (default 100) on the bus with ctx.events.emit: further emits of this run are refused and recorded (denied). `budget` gives the limit.",
    fix: "Emit fewer events per run (batch them into one payload), or raise SVC_RUN_EMIT_BUDGET.",
  },
  event_fanout_exceeded: {
    status: 403,
    title: "Event fan-out exceeded",
    description:
      "Putting this event on the bus would start more trigger runs than SVC_EVENT_MAX_FANOUT (default 100) for one event from outside, counting every run its chain of emitted events started. The event is refused (nothing is queued) and the refusal recorded (denied); `max_fanout`, `already_started` and `would_start` give the figures.",
    fix: "Subscribe fewer agents to the event's types, have runs emit less, or raise SVC_EVENT_MAX_FANOUT.",
  },
  budget_exceeded: {
    status: 402,
    title: "Budget exceeded",
    description:
      "A reasoning call's worst case (its input tokens, counted as an upper bound, plus max_tokens of output at the model's price) does not fit in what the delegation's budget (or a budget of a delegation it derives from) leaves in its period, counting settled calls and the reservations of calls still running. `budget_delegation_id`, `limit_usd`, `period`, `spent_usd`, `reserved_usd`, `remaining_usd` and `required_usd` give the figures. A model without a known price is refused under a budget. The problem's `type` ends in `budget-exceeded`.",
    fix: "Ask for fewer max_tokens, use `budget: optimize` or `minimize` (a cheaper model that fits), wait for the next period, or ask the grantor for a delegation with a larger budget.",
  },
  model_unpriced: {
    status: 402,
    title: "Model has no price",
    description:
      "The caller's delegation (or one it derives from) has a budget, and the model the call pinned, or every model that could take it, has no known price, so its cost could not be reserved against the budget. `unpriced_models` lists them (`<provider>/<model_id>`).",
    fix: "Give the model a price: `input_cost_per_million` and `output_cost_per_million` in its provider's `models` entry (SVC_MODEL_PROVIDERS, or the price fields of the console's Add provider form under Reasoning → Models), or in SVC_MODEL_PRICES_FILE; or call with a key that has no budget.",
    remediation: [
      'Price the model in its provider\'s entry: SVC_MODEL_PROVIDERS=[{"name":"…","kind":"openai-compatible","base_url":"…","models":[{"model_id":"<model>","input_cost_per_million":0.5,"output_cost_per_million":1.5}]}], or a JSON file named by SVC_MODEL_PRICES_FILE, and restart svc.',
      "Or, as an administrator, remove the provider and add it again in the console (Reasoning → Models → Add provider) with its models' prices.",
      "Or make the call with a delegation that has no budget.",
    ],
  },
  reasoning_unavailable: {
    status: 503,
    title: "No model provider",
    description:
      "No model provider is configured, or none of the configured providers offers an active model (their model lists could not be read, or every model is deprecated).",
    fix: "Configure a provider: SVC_MODEL_PROVIDERS, or an administrator adds one in the console under Reasoning → Models.",
    remediation: [
      'Set SVC_MODEL_PROVIDERS to a JSON array of providers, e.g. [{"name":"openai","kind":"openai-compatible","base_url":"https://api.openai.com/v1","api_key":"sk-…"}] (Ollama: base_url http://localhost:11434/v1, listed in SVC_OUTBOUND_ALLOW), and restart svc.',
      "Or, as an administrator, add a provider in the console: Reasoning → Models → Add provider.",
    ],
  },
  model_call_failed: {
    status: 502,
    title: "Model call failed",
    description:
      "Every model of the call's fallback chain failed: a provider error, a timeout (SVC_REASONING_TIMEOUT_MS) or a rate limit. `attempts[]` gives each model and why; the call is recorded (GET /v1/reasoning/calls/{id}, `call_id`) and its budget reservation released.",
    fix: "Retry later, pin another model, or check the providers in the console.",
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
  approval_step_up_required: {
    status: 403,
    title: "Step-up required",
    description:
      "A decision on a high or critical approval request needs a step-up (`step_up` says which): in the console a passkey assertion with user verification made in the deciding session (its sign-in) at most 5 minutes ago; through /v1 a delegation that was not issued to an agent passport.",
    fix: "In the console, confirm with your passkey and decide again; through the API, decide with a person's or the organization's delegation holding svc_api:approvals:respond.",
  },
  passkey_step_up_required: {
    status: 403,
    title: "Passkey confirmation required",
    description:
      "A console session mints a key or delegation token that can decide approval requests or learning proposals (`capabilities` names those of the request that can: svc_api:approvals:respond, svc_api:learning:decide, or a family covering one) only with a passkey assertion made in that session at most 5 minutes old (`step_up`: `passkey`).",
    fix: "Confirm with your passkey in the console (the key form asks for it) and create the key again; or leave out the deciding capabilities.",
  },
  approval_params_mismatch: {
    status: 403,
    title: "Parameters differ from the approved ones",
    description:
      "A call made under an approval's grant carried parameters whose canonical SHA-256 differs from the hash the decision approved (`expected_hash`, `received_hash`). The refusal is recorded.",
    fix: "Send exactly the approved parameters (the decision's modified_params, or the request_data when approved unchanged), or ask for a new approval.",
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
/** A code an area declares in its `server/<area>/contributions.ts` (`errors`), registered by the root. */
export type AreaErrorCode = string & { readonly areaErrorCode?: never };

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
export function errorEntry(code: ErrorCode | AreaErrorCode): ErrorEntry {
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
