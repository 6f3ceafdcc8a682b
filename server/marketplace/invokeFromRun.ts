import { database } from "../db/client";
import { DomainError, ValidationFailed } from "../errors";
import { governCall } from "../governance/governCall";
import { parseOrThrow, refuseHostileInput } from "../http/validation";
import { delegationPrincipal } from "../identity/authenticate";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import type { RunInfo } from "../sandbox/bridge";
import { invokeConnectorOp } from "./operations";
import { completeInvocation, linkInvocation, prepareInvocation } from "./invokeConnector";
import { InvokeRequest, type InvokeResultT } from "./schemas";

/**
 * `ctx.connectors.invoke(installation_id, action, input)`: the invoke operation through the
 * governance gate under the run's delegation (so the manifest must list
 * `svc_api:marketplace:invoke`), recorded as `POST /v1/marketplace/installations/{id}/invoke`
 * with the run's delegate as actor, the invocation counted in the installation's usage like any
 * other. It resolves with exactly what the /v1 call answers, an `InvokeResult`
 * (`{invocation_id, status_code, duration_ms, result, provenance_id, successful, error}`), the
 * provider's failures included (`successful: false`); a refusal (not granted, bad input, a
 * suspended installation…) rejects the guest's promise with its code as `name` and a message fit
 * for the bundle. Tokens never cross into the sandbox.
 */
export async function invokeFromRun(run: RunInfo, args: unknown[]): Promise<InvokeResultT> {
  const delegationId = run.context.delegationId as string;
  const installationId = args[0];
  const raw = { action: args[1], input: args[2] ?? {} };
  let answer: InvokeResultT | undefined;
  try {
    await governCall(
      {
        id: invokeConnectorOp.id,
        label: `POST ${invokeConnectorOp.path}`,
        capability: invokeConnectorOp.capability,
        resourceType: invokeConnectorOp.resourceType,
        write: true,
        successStatus: 200,
      },
      {
        authorization: null,
        clientAddress: "sandbox",
        requestId: newId("req"),
        authenticate: async () => delegationPrincipal((await database()).read, delegationId),
      },
      async () => {
        refuseHostileInput(raw, "body");
        return { requestHash: requestHash({ installation_id: installationId, ...raw }) };
      },
      async (scope) => {
        if (typeof installationId !== "string" || installationId.length === 0 || installationId.length > 100) {
          throw ValidationFailed([
            { field: "installation_id", code: "INVALID_TYPE", message: "Give the installation's id (`ins_…`)." },
          ]);
        }
        scope.setResource(installationId);
        const body = parseOrThrow(InvokeRequest, raw);
        const plan = await prepareInvocation(scope.db, scope.database.engine, scope.principal, installationId, body);
        const result: InvokeResultT = {
          invocation_id: plan.invocationId,
          status_code: null,
          duration_ms: 0,
          result: null,
          provenance_id: "",
          successful: false,
          error: null,
        };
        answer = result;
        scope.onRecord(async (tx, record) => {
          result.provenance_id = record.id;
          await linkInvocation(tx, scope.database.engine, plan.invocationId, record.id);
        });
        scope.afterCommit(
          async () => void Object.assign(result, await completeInvocation(scope.database, plan, run.signal)),
        );
      },
    );
  } catch (e) {
    throw guestError((e as { error?: unknown }).error ?? e);
  }
  // The same answer as POST /v1/marketplace/installations/{id}/invoke: a provider's failure is
  // `successful: false` with its `status_code` or `error`, not a rejection (only refusals reject).
  return answer!;
}

/** What the guest is told: a refusal's code and reason (with its field errors); anything else stays on the host. */
function guestError(inner: unknown): Error {
  if (inner instanceof DomainError && inner.status < 500) {
    const fields = inner.extra.errors?.map((f) => `${f.field}: ${f.message}`).join("; ");
    const err = new Error(fields ? `${inner.message} ${fields}` : inner.message);
    err.name = inner.code;
    return err;
  }
  const err = new Error("The connector could not be invoked: svc failed (the failure is in the service's log).");
  err.name = "internal_error";
  return err;
}
