import { config } from "../config";
import { database } from "../db/client";
import { guestError } from "../events/emitFromRun";
import { PayloadTooLarge } from "../errors";
import { governCall } from "../governance/governCall";
import { parseOrThrow, refuseHostileInput } from "../http/validation";
import { delegationPrincipal } from "../identity/authenticate";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import type { RunInfo } from "../sandbox/bridge";
import { operationLabel } from "../http/operation";
import { thinkOp } from "./operations";
import { ReasoningThinkRequest } from "./schemas";
import { admitThink } from "./thinkReasoning";

/**
 * `ctx.reason(request)`: the think operation through the governance gate under the run's
 * delegation, so it needs `svc_api:reasoning:think` among the manifest's capabilities, leaves its
 * own provenance record (`POST /v1/reasoning/think`, actor the run's delegate) and is charged to
 * the run's delegation chain: the invoker's budget bounds what an agent's runs spend. What the
 * bundle sends passes the same checks as a /v1 body; the model calls stop when the run ends.
 * The guest's promise resolves to the ReasoningThinkResponse, or rejects with the refusal's code
 * as `name` (budget_exceeded, model_call_failed, validation_failed, …).
 */
export async function reasonFromRun(run: RunInfo, args: unknown[]): Promise<unknown> {
  const delegationId = run.context.delegationId as string;
  const raw = args[0];
  try {
    const { value } = await governCall(
      {
        id: thinkOp.id,
        label: operationLabel(thinkOp),
        capability: thinkOp.capability,
        resourceType: thinkOp.resourceType,
        write: true,
        successStatus: thinkOp.successStatus,
      },
      {
        authorization: null,
        clientAddress: "sandbox",
        requestId: newId("req"),
        authenticate: async () => delegationPrincipal((await database()).read, delegationId),
      },
      async () => {
        refuseHostileInput(raw, "body");
        const limit = config().maxBodyBytes;
        if (Buffer.byteLength(JSON.stringify(raw ?? null)) > limit) throw PayloadTooLarge(limit);
        return { requestHash: requestHash(raw) };
      },
      async (scope) => {
        const body = parseOrThrow(ReasoningThinkRequest, raw);
        const admitted = await admitThink(scope, body);
        scope.setResource(admitted.callId);
        scope.afterCommit(() => admitted.run(scope.database, run.signal));
        return admitted.answer;
      },
    );
    return value;
  } catch (e) {
    throw guestError((e as { error?: unknown }).error ?? e);
  }
}
