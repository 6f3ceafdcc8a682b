import { config } from "../config";
import { domainError } from "../errors";
import { callAs, guestError } from "../governance/callAs";
import { parseOrThrow } from "../http/validation";
import type { RunInfo } from "../sandbox/bridge";
import { chainOfRun } from "./chainOfRun";
import { putEvent } from "./putEvent";
import { emitEventOp } from "./operations";
import { refuseReservedEventType } from "./refuseReservedEventType";
import { EventBody } from "./schemas";

/**
 * `ctx.events.emit(type, payload)`: the emit operation through the governance gate under the
 * run's delegation, so it leaves its own provenance record (`POST /v1/events/emit`, actor the
 * run's delegate) and needs `svc_api:events:write` among the manifest's capabilities. What a run
 * sends passes the same checks as a body sent to ingest (NUL, lone surrogates, nesting depth,
 * SVC_MAX_BODY_BYTES, the schema, reserved platform types), each refusal a recorded 4xx. A run
 * puts at most SVC_RUN_EMIT_BUDGET events on the bus, and the event's depth is one more than
 * the event that triggered the run (SVC_EVENT_MAX_DEPTH); the guest's promise rejects with the
 * refusal's code as `name` and its reason as `message`, never with a host error's text.
 */
export async function emitFromRun(run: RunInfo, args: unknown[]): Promise<unknown> {
  const delegationId = run.context.delegationId as string;
  const executionId = run.context.executionId as string | undefined;
  const raw = { type: args[0], payload: args[1] ?? {} };
  try {
    const { value } = await callAs(emitEventOp, { delegationId }, raw, {
      via: "sandbox",
      async run(scope) {
        // The schema and field errors of POST /v1/events/emit, as the gate gives them.
        const body = parseOrThrow(EventBody, raw);
        refuseReservedEventType(body.type);
        const budget = config().runEmitBudget;
        const emitted = await scope.db.event.count({ where: { delegationId, ingestedVia: "emit" } });
        if (emitted >= budget) {
          throw domainError(
            "emit_budget_exhausted",
            `This run already emitted ${emitted} event(s); a run may emit at most ${budget} (SVC_RUN_EMIT_BUDGET).`,
            { budget, emitted },
          );
        }
        const chain = executionId ? await chainOfRun(scope.db, executionId) : { depth: 0, rootEventId: null };
        return putEvent(scope, body, "emit", chain.depth, chain.rootEventId);
      },
    });
    return value;
  } catch (e) {
    throw guestError(e, "The event could not be emitted");
  }
}
