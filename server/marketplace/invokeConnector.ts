import type { z } from "zod";
import { config } from "../config";
import { sqlIn, type Database, type Db } from "../db/client";
import { DomainError, domainError, ValidationFailed } from "../errors";
import type { CallScope } from "../governance/governCall";
import type { Principal } from "../governance/principal";
import { newId } from "../ids";
import { OutboundError } from "../outbound/errors";
import { checkHop } from "../outbound/outboundRequest";
import { jsonSchemaErrors } from "./jsonSchemaErrors";
import { connectorOrThrow } from "./catalogue";
import { actionUrl, executeAction } from "./executeAction";
import { findInstallation } from "./installationViews";
import type { InvokeRequest, InvokeResultT } from "./schemas";
import { accessTokenFor } from "./tokens";
import { logger } from "../telemetry/log";

/** What an accepted invocation will call, decided in the call's transaction. */
export interface InvocationPlan {
  invocationId: string;
  installationId: string;
  connectorId: string;
  action: { id: string; method: string; path: string };
  input: Record<string, unknown>;
  baseUrl: string;
  headers: Record<string, string>;
  needsToken: boolean;
  costUsd: number;
}

/**
 * The checks of an invocation, in the governed call's transaction: the installation is the
 * caller's organization's and active (suspended, pending or uninstalled: 409 naming its state),
 * the action exists and is within its `granted_permissions` (403 otherwise), the input passes
 * the action's `input_schema` (400 with `errors[]`), and the base URL is not one the outbound
 * guard refuses outright (400 `outbound_refused`). It then writes the invocation's row, status
 * `pending`: the provider is called after the transaction commits (`completeInvocation`), so a
 * slow provider never holds the database's write lock.
 */
export async function prepareInvocation(
  db: Db,
  engine: Database["engine"],
  principal: Principal,
  installationId: string,
  body: z.output<typeof InvokeRequest>,
): Promise<InvocationPlan> {
  const installation = await findInstallation(db, principal.orgDid, installationId);
  if (installation.status !== "active") {
    throw domainError(
      "installation_not_active",
      `The installation is ${installation.status}; only an active installation can be invoked.`,
      { current_state: installation.status, requested_state: "invoked" },
    );
  }
  const catalogued = connectorOrThrow(installation.connectorId);
  const connector = catalogued.definition;
  const entry = catalogued.actions.get(body.action);
  if (!entry) {
    throw ValidationFailed([
      {
        field: "action",
        code: "INVALID_ENUM",
        message: `${connector.name} has no action ${JSON.stringify(body.action)}.`,
        expected: [...catalogued.actions.keys()].join(" | "),
        received: body.action.slice(0, 100),
      },
    ]);
  }
  const action = entry.action;
  const granted = (installation.grantedPermissions as string[] | null) ?? [];
  if (!granted.includes(action.id)) {
    throw domainError(
      "action_not_granted",
      `The installation was not granted ${action.id}: its granted_permissions are ${granted.join(", ") || "empty"}. Change them with PATCH /v1/marketplace/installations/{id}.`,
      { action: action.id, granted_permissions: granted },
    );
  }
  if (!entry.validateInput(body.input)) {
    throw ValidationFailed(
      jsonSchemaErrors(entry.validateInput.errors, "input"),
      "The input does not match the action's input_schema.",
    );
  }
  if (
    connector.oauth.required &&
    !installation.refreshTokenSealed &&
    installation.tokenExpiresAt &&
    installation.tokenExpiresAt.getTime() <= Date.now()
  ) {
    throw domainError(
      "connector_connection_expired",
      "The installation's access token expired and the provider gave no refresh token: install it again.",
      { installation_id: installation.id },
    );
  }
  const baseUrl = installation.baseUrl ?? connector.api_base_url;
  // The URL is built now too, so a path value it refuses is a 400 before anything is recorded as invoked.
  checkHop(actionUrl(baseUrl, action.path, body.input).url, false);
  const plan: InvocationPlan = {
    invocationId: newId("civ"),
    installationId: installation.id,
    connectorId: connector.connector_id,
    action: { id: action.id, method: action.method, path: action.path },
    input: body.input,
    baseUrl,
    headers: connector.api_headers ?? {},
    needsToken: connector.oauth.required,
    costUsd: connector.cost_per_invocation_usd ?? 0,
  };
  // Raw SQL: one INSERT on every invocation's hot path (Prisma's create costs ~1 ms of CPU here).
  await sqlIn(db, engine).execute(
    `INSERT INTO "connector_invocation" ("id","org_did","installation_id","connector_id","action","status","duration_ms","cost_usd","created_at")
     VALUES ($1,$2,$3,$4,$5,'pending',0,0,$6)`,
    [plan.invocationId, principal.orgDid, installation.id, connector.connector_id, action.id, new Date()],
  );
  return plan;
}

/** Points the invocation's row at the provenance record of the call that made it (in that call's transaction). */
export async function linkInvocation(tx: Db, engine: Database["engine"], invocationId: string, recordId: string) {
  await sqlIn(tx, engine).execute(`UPDATE "connector_invocation" SET "provenance_record_id" = $1 WHERE "id" = $2`, [
    recordId,
    invocationId,
  ]);
}

/**
 * Calls the provider for an accepted invocation and records the outcome on its row: status,
 * duration, cost (charged only when the provider answered). Never throws: a provider that cannot
 * be reached is an outcome (`error`), since the governed call has already committed. The access
 * token is decrypted here, used for this one request and never returned, logged or stored
 * elsewhere; an answer that echoes it has it replaced by `[redacted]`.
 */
export async function completeInvocation(
  database: Database,
  plan: InvocationPlan,
  signal?: AbortSignal,
): Promise<Omit<InvokeResultT, "provenance_id">> {
  const cfg = config();
  let token: string | null = null;
  let outcome: Omit<InvokeResultT, "provenance_id" | "invocation_id">;
  const started = performance.now();
  try {
    if (plan.needsToken) {
      const installation = await database.read.connectorInstallation.findUniqueOrThrow({
        where: { id: plan.installationId },
      });
      // Refreshes an expiring token first (a provider call, then a conditional update of the row).
      token = await accessTokenFor(database.read, installation);
    }
    const answer = await executeAction({
      action: plan.action,
      input: plan.input,
      baseUrl: plan.baseUrl,
      headers: plan.headers,
      accessToken: token,
      timeoutMs: cfg.connectorTimeoutMs,
      maxBytes: cfg.connectorMaxResponseBytes,
      signal,
    });
    outcome = answer.truncated
      ? {
          status_code: answer.status,
          duration_ms: answer.durationMs,
          result: null,
          successful: false,
          error: {
            code: "connector_answer_too_large",
            message: `The provider's answer is over ${cfg.connectorMaxResponseBytes} bytes (SVC_CONNECTOR_MAX_RESPONSE_BYTES); it was dropped.`,
          },
        }
      : {
          status_code: answer.status,
          duration_ms: answer.durationMs,
          result: redact(answer.result, token),
          successful: answer.status >= 200 && answer.status < 300,
          error: null,
        };
  } catch (e) {
    const known = e instanceof OutboundError || (e instanceof DomainError && e.code === "connector_connection_expired");
    if (!known) logger().error({ err: e }, `connector invocation ${plan.invocationId} failed`);
    outcome = {
      status_code: null,
      duration_ms: Math.round(performance.now() - started),
      result: null,
      successful: false,
      error: known
        ? { code: e.code as "outbound_failed", message: redactText(e.message, token) }
        : { code: "outbound_failed", message: "The provider could not be called (the cause is in the service's log)." },
    };
  }
  // One statement, atomic on its own: no interactive transaction around it (it would cost two
  // round trips more on PostgreSQL, and Prisma's transaction ~1 ms of CPU on SQLite).
  await database.raw.execute(
    `UPDATE "connector_invocation" SET "status" = $1, "status_code" = $2, "duration_ms" = $3, "cost_usd" = $4, "error" = $5 WHERE "id" = $6`,
    [
      outcome.successful ? "success" : "failed",
      outcome.status_code,
      outcome.duration_ms,
      outcome.status_code === null ? 0 : plan.costUsd,
      outcome.error ? `${outcome.error.code}: ${outcome.error.message}`.slice(0, 1000) : null,
      plan.invocationId,
    ],
  );
  return { invocation_id: plan.invocationId, ...outcome };
}

function redactText(text: string, token: string | null): string {
  return token ? text.split(token).join("[redacted]") : text;
}

/** The answer with every occurrence of the token replaced: a provider echoing the request must not hand it out. */
function redact(result: unknown, token: string | null): unknown {
  if (!token || result === null) return result;
  const text = JSON.stringify(result);
  return text.includes(token) ? (JSON.parse(redactText(text, token)) as unknown) : result;
}

/**
 * One invocation inside a governed call (the /v1 operation and a run's `ctx.connectors.invoke`
 * alike): admitted in the call's transaction, linked to its provenance record, and the provider
 * called once the transaction has committed. The answer is the operation's `InvokeResult`,
 * filled in after commit, before the call's answer is sent.
 */
export async function invokeInCall(
  scope: Pick<CallScope, "db" | "database" | "principal" | "setResource" | "onRecord" | "afterCommit">,
  installationId: string,
  body: z.output<typeof InvokeRequest>,
  signal?: AbortSignal,
): Promise<InvokeResultT> {
  scope.setResource(installationId);
  const plan = await prepareInvocation(scope.db, scope.database.engine, scope.principal, installationId, body);
  const answer: InvokeResultT = {
    invocation_id: plan.invocationId,
    status_code: null,
    duration_ms: 0,
    result: null,
    provenance_id: "",
    successful: false,
    error: null,
  };
  scope.onRecord(async (tx, record) => {
    answer.provenance_id = record.id;
    await linkInvocation(tx, scope.database.engine, plan.invocationId, record.id);
  });
  // Never with the write lock held: a slow provider must not stall every other write.
  scope.afterCommit(async () => void Object.assign(answer, await completeInvocation(scope.database, plan, signal)));
  return answer;
}
