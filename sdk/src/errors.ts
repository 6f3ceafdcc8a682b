/** One field of a 400 `validation_failed` problem. */
export interface SvcFieldError {
  field: string;
  code: string;
  message: string;
  received?: unknown;
}

/** An RFC 9457 problem+json answer of svc (every error svc gives has this shape). */
export interface SvcProblem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  request_id?: string;
  errors?: SvcFieldError[];
  remediation?: unknown[];
  [extension: string]: unknown;
}

/**
 * An answer that was not a success, as an exception: the problem's fields, plus `code` (the
 * problem type's fragment, e.g. `validation_failed`, as listed at /docs/errors) and the response.
 */
export class SvcProblemError extends Error {
  readonly type: string;
  readonly code: string;
  readonly status: number;
  readonly title: string;
  readonly detail: string | undefined;
  readonly errors: SvcFieldError[];
  readonly requestId: string | undefined;
  readonly problem: SvcProblem;
  /** Seconds the service asked to wait (`Retry-After`), on 429 and 503. */
  readonly retryAfter: number | undefined;

  constructor(problem: SvcProblem, response?: { headers: { get(name: string): string | null } }) {
    super(`${problem.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ""}`);
    this.name = "SvcProblemError";
    this.problem = problem;
    this.type = problem.type;
    this.code = problem.type.includes("#") ? problem.type.slice(problem.type.lastIndexOf("#") + 1) : problem.type;
    this.status = problem.status;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.requestId = problem.request_id ?? response?.headers.get("x-request-id") ?? undefined;
    const retry = response?.headers.get("retry-after");
    this.retryAfter = retry && /^\d+$/.test(retry) ? Number(retry) : undefined;
  }
}

/** A webhook delivery or an inclusion proof that does not verify. */
export class SvcVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SvcVerificationError";
  }
}
