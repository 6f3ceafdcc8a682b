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

export const ValidationFailed = (errors: FieldError[], detail = "The request did not pass validation.") =>
  new DomainError(400, "validation_failed", "Validation failed", detail, { errors });

export const Unauthenticated = (detail: string) =>
  new DomainError(401, "unauthenticated", "Authentication required", detail, {
    remediation: [
      {
        step: 1,
        description:
          "Include an Authorization header with a valid API token: `Authorization: Bearer <API_KEY>`. Create one with `npx svc keys create` or in the console under API keys.",
      },
    ],
  });

export const Forbidden = (detail: string, extra: Record<string, unknown> = {}) =>
  new DomainError(403, "forbidden", "Forbidden", detail, {
    remediation: [
      {
        step: 1,
        description: "Ask an administrator of your organization for a delegation that covers this operation.",
      },
    ],
    ...extra,
  });

export const NotFound = (what: string, id: string) =>
  new DomainError(404, "not_found", "Not found", `No ${what} with id ${JSON.stringify(id)}.`);

export const Conflict = (detail: string, extra: Record<string, unknown> = {}) =>
  new DomainError(409, "conflict", "Conflict", detail, extra);

/** An illegal state transition: the problem names the current and the requested state. */
export const IllegalTransition = (what: string, current: string, requested: string) =>
  new DomainError(409, "illegal_state_transition", "Illegal state transition", `The ${what} is ${current} and cannot become ${requested}.`, {
    current_state: current,
    requested_state: requested,
  });

/**
 * The one mapping from anything thrown to a DomainError, used by the gate (the recorded status),
 * the /v1 adapter (problem+json) and the tRPC middleware, so the three can never disagree.
 * Database errors a caller can cause (a unique key taken by a concurrent request, a serialization
 * failure) are conflicts, not failures; anything else unexpected is a 500 `internal_error`.
 */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "P2002") return new DomainError(409, "conflict", "Conflict", "A resource with the same unique key already exists (possibly created by a concurrent request).");
  if (code === "P2034") return new DomainError(409, "conflict", "Conflict", "The request conflicted with a concurrent change; retry it.");
  return new DomainError(500, "internal_error", "Internal error", "The service failed to complete this request. Quote the incident id when you report it.");
}
