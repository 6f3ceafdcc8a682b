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
          "Include an Authorization header with a valid API token: `Authorization: Bearer <API_KEY>`. Create one in the console under API keys, or with the `npx svc keys create` command the server printed at start (it names the server's DATA_DIR / DATABASE_URL when they are not the defaults; the CLI says which database it uses).",
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
