import { errorEntry, type AreaErrorCode, type ErrorCode } from "../errorCatalogue";
import { EXAMPLE } from "./examples";
import type { Operation } from "../http/operation";

/**
 * The problem responses of an operation, from the error catalogue: each status lists the codes it
 * may carry, each with a link to its /docs/errors entry, and an example problem of the first.
 */
// Every operation touches the database, so every one may meet an outage (503, with Retry-After).
const EVERY_OPERATION: ErrorCode[] = [
  "validation_failed",
  "unauthenticated",
  "forbidden",
  "rate_limited",
  "internal_error",
  "database_unavailable",
  "storage_full",
];

/** The catalogued codes `op` can answer with. */
export function problemCodesOf(op: Operation): (ErrorCode | AreaErrorCode)[] {
  const codes = new Set<ErrorCode | AreaErrorCode>(EVERY_OPERATION);
  if (op.params) codes.add("not_found");
  if (op.method !== "GET") {
    codes.add("conflict");
    codes.add("illegal_state_transition");
  }
  if (op.body) {
    codes.add("payload_too_large");
    codes.add("unsupported_media_type");
  }
  if (op.method === "POST") codes.add("idempotency_key_reused");
  for (const code of op.problems ?? []) codes.add(code);
  return [...codes];
}

export function problemResponses(
  codes: readonly (ErrorCode | AreaErrorCode)[],
  operationPath: string,
): Record<string, unknown> {
  const byStatus = new Map<number, (ErrorCode | AreaErrorCode)[]>();
  for (const code of codes) {
    const entry = errorEntry(code);
    for (const status of [entry.status, ...(entry.otherStatuses ?? [])])
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const first = errorEntry(list[0]!);
    out[String(status)] = {
      description: list
        .map(
          (code) =>
            `\`${code}\` (${errorEntry(code).title}): ${errorEntry(code).description} See /docs/errors#${code}.`,
        )
        .join("\n\n"),
      ...(status === 503
        ? {
            headers: {
              "Retry-After": {
                description: "Seconds to wait before retrying.",
                schema: { type: "integer", minimum: 1 },
              },
            },
          }
        : {}),
      content: {
        "application/problem+json": {
          schema: { $ref: "#/components/schemas/ProblemDetails" },
          example: {
            type: `https://svc.example.com/docs/errors#${list[0]}`,
            title: first.title,
            status,
            detail: first.description,
            instance: operationPath,
            request_id: EXAMPLE.requestId,
          },
        },
      },
    };
  }
  return out;
}
