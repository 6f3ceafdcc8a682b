import { createHash } from "node:crypto";
import { config } from "../config";
import { ValidationFailed } from "../errors";
import { EMPTY_SHA256, GateError, governCall, operationSpec, type Prepared } from "../governance/governCall";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import { operationLabel, type Operation } from "./operation";
import { problemAnswer, toProblem } from "./problem";
import { rateLimitHeaders } from "./rateLimit";
import { readJson, refuseBody } from "./body";
import { CLIENT_ADDRESS_HEADER } from "./clientAddress";
import { idempotency, replaceStoredResponse } from "./idempotency";
import { parseOrThrow, refuseHostileInput } from "./validation";
import type { Principal } from "../governance/principal";
import { logger } from "../telemetry/log";
import { fromWebRequest, toResponse, type PlainAnswer, type V1Answer, type V1Request } from "./v1Request";

// The tRPC endpoint imports the bounded reader from here.
export { readLimited } from "./body";

/**
 * The /v1 adapter of the governance gate: turns a Web-standard Request into a governed call
 * (server/governance/governCall.ts) and its outcome into JSON or problem+json. Parsing (415, 413,
 * 400) and idempotency happen inside the gate, after authorization, so they are recorded too.
 * No Next.js-only API is used: server/http/router.ts routes both transports to it.
 */
export async function serveOperation(
  op: Operation,
  request: Request,
  params: Record<string, string>,
): Promise<Response> {
  return toResponse(await answerOperation(op, fromWebRequest(request), new URL(request.url), params));
}

const REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;
/** The caller's X-Request-Id when it is a sane token, else a new one. */
export function requestIdFor(request: Pick<V1Request, "header">): string {
  const sent = request.header("x-request-id") ?? "";
  return REQUEST_ID.test(sent) ? sent : newId("req");
}
export { CLIENT_ADDRESS_HEADER } from "./clientAddress";

/** `serveOperation` for the routing table, which has parsed the URL already and writes the answer to its transport. */
export async function answerOperation(
  op: Operation,
  request: V1Request,
  url: URL,
  rawParams: Record<string, string>,
): Promise<V1Answer> {
  const requestId = requestIdFor(request);
  const label = operationLabel(op);
  let params: unknown = {};
  let query: unknown = {};
  let body: unknown;
  let firstParam: string | undefined;
  let replayBody: string | undefined;
  const idempotencyKey = op.method === "POST" ? request.header("idempotency-key") : null;
  let idempotencyScope = "";

  const prepare = async (principal: Principal): Promise<Prepared> => {
    refuseHostileInput(rawParams, "path");
    const rawQuery = Object.fromEntries(url.searchParams);
    refuseHostileInput(rawQuery, "query");
    const first = Object.values(rawParams)[0];
    if (typeof first === "string") firstParam = first;
    params = op.params ? parseOrThrow(op.params, rawParams) : {};
    query = op.query ? parseOrThrow(op.query, rawQuery) : {};
    let hash = EMPTY_SHA256;
    if (op.body) {
      const raw = await readJson(request.web(), config().maxBodyBytes);
      if (raw !== undefined) {
        refuseHostileInput(raw, "body");
        hash = requestHash(raw);
      }
      if (raw === undefined && !op.bodyOptional)
        throw ValidationFailed([
          { field: "body", code: "REQUIRED_FIELD_MISSING", message: "This operation needs a JSON body." },
        ]);
      body = raw === undefined ? undefined : parseOrThrow(op.body, raw);
    } else if (op.method !== "GET") await refuseBody(request.web());
    if (idempotencyKey === null) return { requestHash: hash };
    idempotencyScope = principal.delegationId || principal.actorDid;
    return idempotency(
      idempotencyScope,
      idempotencyKey,
      createHash("sha256").update(`${label}\n${url.pathname}\n${hash}`).digest("hex"),
      hash,
      (stored) => (replayBody = stored),
    );
  };

  try {
    const outcome = await governCall(
      operationSpec(op),
      {
        authorization: request.header("authorization"),
        clientAddress: request.header(CLIENT_ADDRESS_HEADER) ?? "unknown",
        requestId,
        traceparent: request.header("traceparent"),
        tracestate: request.header("tracestate"),
        ...(op.authenticateRequest ? { authenticate: () => op.authenticateRequest!(request.web()) } : {}),
      },
      prepare,
      async (scope) => {
        if (firstParam !== undefined) scope.setResource(firstParam);
        const out = await op.handler({ ...scope, params, query, body } as Parameters<Operation["handler"]>[0]);
        return checkResponse(op, out);
      },
    );
    const headers: Record<string, string> = {
      "X-Request-Id": requestId,
      ...rateLimitHeaders(outcome.rateLimit),
      "Content-Type": "application/json",
    };
    if (outcome.value instanceof Response) {
      for (const [k, v] of Object.entries(headers)) if (!outcome.value.headers.has(k)) outcome.value.headers.set(k, v);
      return outcome.value;
    }
    if (outcome.replayed)
      return {
        status: outcome.status,
        headers: {
          ...headers,
          // A stored failure (work after commit refused the call) replays as the problem it was.
          ...(outcome.status >= 400 ? { "Content-Type": "application/problem+json" } : {}),
          "Idempotent-Replayed": "true",
        },
        body: replayBody ?? null,
      } satisfies PlainAnswer;
    const text = JSON.stringify(outcome.value);
    if (idempotencyKey !== null && outcome.changedAfterCommit)
      await replaceStoredResponse(idempotencyScope, idempotencyKey, outcome.status, text).catch((e: unknown) =>
        logger().error({ err: e }, `${op.id}: the idempotent response could not be replaced`),
      );
    // An answer that says it repeats an earlier one (a sender id seen before) says so in the header too, like an Idempotency-Key replay.
    const repeated = (outcome.value as { replayed?: unknown } | null)?.replayed === true;
    return {
      status: outcome.status,
      headers: repeated ? { ...headers, "Idempotent-Replayed": "true" } : headers,
      body: text,
    } satisfies PlainAnswer;
  } catch (e) {
    const gateError = e instanceof GateError ? e : new GateError(e, undefined);
    const { problem, headers } = toProblem(gateError.error, url.pathname, requestId);
    if (gateError.afterCommit && idempotencyKey !== null && idempotencyScope !== "")
      await replaceStoredResponse(idempotencyScope, idempotencyKey, problem.status, JSON.stringify(problem)).catch(
        (e: unknown) => logger().error({ err: e }, `${op.id}: the idempotent response could not be replaced`),
      );
    return problemAnswer(problem, {
      "X-Request-Id": requestId,
      ...(gateError.rateLimit ? rateLimitHeaders(gateError.rateLimit) : {}),
      ...headers,
    });
  }
}

/** In development and tests every response is checked against its schema; a mismatch is a bug. */
function checkResponse(op: Operation, out: unknown): unknown {
  if (process.env.NODE_ENV === "production" || out instanceof Response) return out;
  const parsed = op.response.safeParse(out);
  if (!parsed.success)
    throw new Error(`${op.id} returned a body that does not match its response schema: ${parsed.error.message}`);
  return out;
}
