import { ValidationFailed } from "../errors";
import { callAs, guestError } from "../governance/callAs";
import { parseOrThrow } from "../http/validation";
import type { RunInfo } from "../sandbox/bridge";
import { invokeConnectorOp } from "./operations";
import { invokeInCall } from "./invokeConnector";
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
    await callAs(invokeConnectorOp, { delegationId }, raw, {
      via: "sandbox",
      hashed: { installation_id: installationId, ...raw },
      // The invoke request's schema bounds what it takes; the connector's own input schema the rest.
      sizeLimit: false,
      async run(scope) {
        if (typeof installationId !== "string" || installationId.length === 0 || installationId.length > 100) {
          throw ValidationFailed([
            { field: "installation_id", code: "INVALID_TYPE", message: "Give the installation's id (`ins_…`)." },
          ]);
        }
        answer = await invokeInCall(scope, installationId, parseOrThrow(InvokeRequest, raw), run.signal);
      },
    });
  } catch (e) {
    throw guestError(e, "The connector could not be invoked");
  }
  // The same answer as POST /v1/marketplace/installations/{id}/invoke: a provider's failure is
  // `successful: false` with its `status_code` or `error`, not a rejection (only refusals reject).
  return answer!;
}
