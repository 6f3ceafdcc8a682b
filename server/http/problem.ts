import { config } from "../config";
import { DomainError, toDomainError } from "../errors";
import { newId } from "../ids";
import { logger } from "../telemetry/log";
import { toResponse, type PlainAnswer } from "./v1Request";

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
export function toProblem(
  error: unknown,
  instance: string,
  requestId: string,
): { problem: Problem; headers: Record<string, string> } {
  const base = `${config().publicUrl}/docs/errors#`;
  const mapped = toDomainError(error);
  // Only what was not a DomainError and maps to 500 is an incident: logged, never shown.
  if (error instanceof DomainError || mapped.status !== 500) {
    const { headers = {}, ...extra } = mapped.extra;
    return {
      problem: {
        type: base + mapped.code,
        title: mapped.title,
        status: mapped.status,
        detail: mapped.message,
        instance,
        request_id: requestId,
        ...extra,
      },
      headers,
    };
  }
  const incident = newId("inc");
  logger().error({ err: error, incident_id: incident, request_id: requestId }, `incident ${incident} (${instance})`);
  return {
    problem: {
      type: base + mapped.code,
      title: mapped.title,
      status: mapped.status,
      detail: mapped.message,
      instance,
      request_id: requestId,
      incident_id: incident,
    },
    headers: {},
  };
}

export function problemResponse(problem: Problem, headers: Record<string, string>): Response {
  return toResponse(problemAnswer(problem, headers));
}

/** `problemResponse` as the /v1 routing table answers it (server/http/v1Request.ts). */
export function problemAnswer(problem: Problem, headers: Record<string, string>): PlainAnswer {
  return {
    status: problem.status,
    headers: { ...headers, "Content-Type": "application/problem+json" },
    body: JSON.stringify(problem),
  };
}
