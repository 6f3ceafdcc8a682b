import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { ZodError } from "zod";
import { config } from "../config";
import { DomainError, toDomainError, ValidationFailed } from "../errors";
import { GateError, governCall, procedureSpec, type CallScope } from "../governance/governCall";
import { fieldErrors, refuseHostileInput } from "../http/validation";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import { logger } from "../telemetry/log";

/**
 * tRPC for the console. Every procedure passes through the same governance gate as /v1
 * (server/governance/governCall.ts): the caller is authenticated, the procedure's capability is
 * checked, and the call leaves one provenance record. Procedures are built from declarations
 * (server/trpc/procedures.ts): an area's operations, or the console's own procedures.
 */
export interface TrpcContext {
  authorization: string | null;
  clientAddress: string;
  requestId: string;
  /** The caller's W3C trace context headers, continued by the call's span. */
  traceparent?: string | null;
  tracestate?: string | null;
  /** A console session (issue: passkey sign-in) resolves its own principal. */
  authenticate?: () => Promise<Principal>;
}

export interface ProcedureMeta {
  capability: string | null;
  resourceType: string | null;
  /** The console's own procedures only: the console roles admitted (bearer tokens are refused). */
  roles?: readonly string[];
}

const STATUS_TO_CODE: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  410: "NOT_FOUND",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
};

const t = initTRPC
  .context<TrpcContext>()
  .meta<ProcedureMeta>()
  .create({
    // Live views are server-sent-event streams that stay silent until something changes; a proxy
    // cuts a silent stream (nginx's proxy_read_timeout, 60 s by default) and the browser reopens
    // it, a governed read each time. A ping while idle keeps it open; a client that hears nothing
    // for three intervals (a proxy that buffers) reconnects by itself.
    sse: {
      ping: { enabled: true, intervalMs: config().sseHeartbeatMs },
      client: { reconnectAfterInactivityMs: config().sseHeartbeatMs * 3 },
    },
    errorFormatter({ shape, error }) {
      const domain = error.cause instanceof DomainError ? error.cause : undefined;
      // The same problem details as /v1 (field errors, remediation), never a stack trace.
      const { headers: _h, ...extra } = domain?.extra ?? {};
      return {
        ...shape,
        data: {
          code: shape.data.code,
          httpStatus: shape.data.httpStatus,
          path: shape.data.path,
          problem: domain ? { code: domain.code, title: domain.title, detail: domain.message, ...extra } : undefined,
        },
      };
    },
  });

/**
 * What tRPC itself raised, as the domain error the gate records: an input that failed its schema
 * is a 400 with field errors; anything else goes through the one mapper (server/errors.ts), so a
 * unique-key race is a 409 here exactly as on /v1. An output that fails its schema is a bug (500).
 */
function fromTrpc(error: unknown): DomainError {
  if (error instanceof TRPCError) {
    if (error.cause instanceof DomainError) return error.cause;
    if (error.code === "BAD_REQUEST" || error.code === "PARSE_ERROR") {
      if (error.cause instanceof ZodError) return ValidationFailed(fieldErrors(error.cause));
      return ValidationFailed([{ field: "input", code: "INVALID_VALUE", message: error.message }]);
    }
    return toDomainError(error.cause ?? error);
  }
  return toDomainError(error);
}

function toTrpcError(error: unknown, original: unknown): TRPCError {
  const domain = fromTrpc(error);
  // An outage (the database away or full) is no failure of the procedure: 503, logged once for all of it.
  if (domain.status === 503)
    return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: domain.message, cause: domain });
  if (domain.status >= 500) {
    logger().error({ err: original }, "tRPC procedure failed");
    return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "The service failed to complete this request." });
  }
  return new TRPCError({
    code: STATUS_TO_CODE[domain.status] ?? "BAD_REQUEST",
    message: domain.message,
    cause: domain,
  });
}

/** Set by a procedure whose answer work after commit fills in: how to read the final answer. */
export interface LateAnswer {
  answer?: () => unknown;
}

const governed = t.middleware(async ({ ctx, meta, path, type, next, getRawInput }) => {
  const late: LateAnswer = {};
  try {
    const outcome = await governCall(
      procedureSpec(path, type === "mutation", meta),
      {
        authorization: ctx.authorization,
        clientAddress: ctx.clientAddress,
        requestId: ctx.requestId,
        traceparent: ctx.traceparent,
        tracestate: ctx.tracestate,
        authenticate: ctx.authenticate,
      },
      async () => {
        let raw: unknown;
        try {
          raw = await getRawInput();
        } catch (e) {
          throw fromTrpc(e);
        }
        refuseHostileInput(raw, "input");
        return { requestHash: requestHash(raw ?? undefined) };
      },
      async (scope: CallScope) => {
        const result = await next({ ctx: { scope, late } });
        // Throwing rolls a mutation's writes back and records the failure's status.
        if (!result.ok) throw fromTrpc(result.error);
        return result;
      },
    );
    // An answer that work after commit completed (a deploy's `wait`) is read again once that work ran.
    if (late.answer && outcome.value!.ok) (outcome.value as { data: unknown }).data = late.answer();
    return outcome.value!;
  } catch (e) {
    const error = e instanceof GateError ? e.error : e;
    throw toTrpcError(error, error instanceof TRPCError ? (error.cause ?? error) : error);
  }
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/** Every procedure: governed; what it needs (capability, console roles) is in its `meta`. */
export const governedProcedure = t.procedure.use(governed);

/** A context for a request carrying a bearer token (the fetch adapter and tests). */
export function contextFromHeaders(headers: Headers, clientAddress = "unknown"): TrpcContext {
  return {
    authorization: headers.get("authorization"),
    clientAddress,
    requestId: newId("req"),
    traceparent: headers.get("traceparent"),
    tracestate: headers.get("tracestate"),
  };
}
