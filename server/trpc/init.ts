import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { ZodError } from "zod";
import { DomainError, ValidationFailed } from "../errors";
import { GateError, governCall, type CallScope } from "../governance/governCall";
import { fieldErrors, refuseHostileInput } from "../http/validation";
import type { Principal } from "../identity/authenticate";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";

/**
 * tRPC for the console. Every procedure passes through the same governance gate as /v1
 * (server/governance/governCall.ts): the caller is authenticated, the procedure's capability is
 * checked, and the call leaves one provenance record. Procedures declare their capability in
 * `meta`; tiers below add nothing that bypasses the gate.
 */
export interface TrpcContext {
  /** Console roles the procedure's tier admits (set by the tier, not by the caller). */
  roles?: readonly string[];
  authorization: string | null;
  clientAddress: string;
  requestId: string;
  /** A console session (issue: passkey sign-in) resolves its own principal. */
  authenticate?: () => Promise<Principal>;
}

export interface ProcedureMeta {
  capability: string | null;
  resourceType: string | null;
  /** Set by the procedure tiers below. */
  roles?: readonly string[];
}

const STATUS_TO_CODE: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  422: "UNPROCESSABLE_CONTENT",
  429: "TOO_MANY_REQUESTS",
};

const t = initTRPC
  .context<TrpcContext>()
  .meta<ProcedureMeta>()
  .create({
    errorFormatter({ shape, error }) {
      const domain = error.cause instanceof DomainError ? error.cause : undefined;
      // The same problem details as /v1 (field errors, remediation), never a stack trace.
      const { headers: _h, ...extra } = domain?.extra ?? {};
      return { ...shape, data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, problem: domain ? { code: domain.code, title: domain.title, detail: domain.message, ...extra } : undefined } };
    },
  });

/** A tRPC failure as the gate's domain error, so it is recorded with the right status. */
function toDomainError(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  if (error instanceof TRPCError) {
    if (error.cause instanceof ZodError) return ValidationFailed(fieldErrors(error.cause));
    if (error.cause instanceof DomainError) return error.cause;
    if (error.code === "BAD_REQUEST" || error.code === "PARSE_ERROR") return ValidationFailed([{ field: "input", code: "INVALID_VALUE", message: error.message }]);
    if (error.cause) return error.cause;
  }
  return error;
}

function toTrpcError(error: unknown): TRPCError {
  if (error instanceof DomainError) {
    return new TRPCError({ code: STATUS_TO_CODE[error.status] ?? "INTERNAL_SERVER_ERROR", message: error.message, cause: error });
  }
  console.error("[svc] tRPC procedure failed:", error);
  return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: "The service failed to complete this request." });
}

const governed = t.middleware(async ({ ctx, meta, path, type, next, getRawInput }) => {
  try {
    const outcome = await governCall(
      { id: `trpc:${path}`, label: `TRPC ${path}`, capability: meta?.capability ?? null, resourceType: meta?.resourceType ?? null, write: type === "mutation", successStatus: 200, roles: ctx.roles },
      { authorization: ctx.authorization, clientAddress: ctx.clientAddress, requestId: ctx.requestId, authenticate: ctx.authenticate },
      async () => {
        let raw: unknown;
        try {
          raw = await getRawInput();
        } catch (e) {
          throw toDomainError(e);
        }
        refuseHostileInput(raw, "input");
        return { requestHash: requestHash(raw ?? undefined) };
      },
      async (scope: CallScope) => {
        const result = await next({ ctx: { scope } });
        // Throwing rolls a mutation's writes back and records the failure's status.
        if (!result.ok) throw toDomainError(result.error);
        return result;
      },
    );
    return outcome.value!;
  } catch (e) {
    throw toTrpcError(e instanceof GateError ? toDomainError(e.error) : toDomainError(e));
  }
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

const tier = (roles: readonly string[]) => t.middleware(({ ctx, next }) => next({ ctx: { ...ctx, roles } }));

/** Any authenticated caller of an organization (every console role); the capability in `meta` decides the rest. */
export const orgProcedure = t.procedure.use(governed);
/** Approvers and administrators. */
export const approverProcedure = t.procedure.use(tier(["admin", "approver"])).use(governed);
/** Administrators only. */
export const adminProcedure = t.procedure.use(tier(["admin"])).use(governed);

/** A context for a request carrying a bearer token (the fetch adapter and tests). */
export function contextFromHeaders(headers: Headers, clientAddress = "unknown"): TrpcContext {
  return { authorization: headers.get("authorization"), clientAddress, requestId: newId("req") };
}
