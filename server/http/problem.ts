import { config } from "../config";
import { DomainError } from "../errors";
import { newId } from "../ids";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  request_id: string;
  [key: string]: unknown;
}

/** Turns any thrown value into RFC 7807 problem details. Unexpected errors are logged with an incident id and never shown. */
export function toProblem(error: unknown, instance: string, requestId: string): { problem: Problem; headers: Record<string, string> } {
  const base = `${config().publicUrl}/docs/errors#`;
  const mapped = error instanceof DomainError ? error : fromDriverError(error);
  if (mapped) {
    const { headers = {}, ...extra } = mapped.extra;
    return {
      problem: { type: base + mapped.code, title: mapped.title, status: mapped.status, detail: mapped.message, instance, request_id: requestId, ...extra },
      headers,
    };
  }
  const incident = newId("inc");
  console.error(`[svc] incident ${incident} (request ${requestId}, ${instance}):`, error);
  return {
    problem: { type: base + "internal_error", title: "Internal error", status: 500, detail: "The service failed to complete this request. Quote the incident id when you report it.", instance, request_id: requestId, incident_id: incident },
    headers: {},
  };
}

/** Database errors a caller can cause (a unique key taken by a concurrent request) are conflicts, not failures. */
function fromDriverError(error: unknown): DomainError | undefined {
  const code = (error as { code?: unknown })?.code;
  if (code === "P2002") return new DomainError(409, "conflict", "Conflict", "A resource with the same unique key already exists (possibly created by a concurrent request).");
  if (code === "P2034") return new DomainError(409, "conflict", "Conflict", "The request conflicted with a concurrent change; retry it.");
  return undefined;
}

export function problemResponse(problem: Problem, headers: Record<string, string>): Response {
  return new Response(JSON.stringify(problem), { status: problem.status, headers: { ...headers, "Content-Type": "application/problem+json" } });
}
