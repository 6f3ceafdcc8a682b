import { callAs, guestError } from "../governance/callAs";
import { parseOrThrow } from "../http/validation";
import type { RunInfo } from "../sandbox/bridge";
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
    const { value } = await callAs(thinkOp, { delegationId }, raw, {
      via: "sandbox",
      async run(scope) {
        const body = parseOrThrow(ReasoningThinkRequest, raw);
        const admitted = await admitThink(scope, body);
        scope.setResource(admitted.callId);
        scope.afterCommit(() => admitted.run(scope.database, run.signal));
        return admitted.answer;
      },
    });
    return value;
  } catch (e) {
    throw guestError(e, "The reasoning call could not be made");
  }
}
