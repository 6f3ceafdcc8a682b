import { database } from "../db/client";
import { ValidationFailed } from "../errors";
import { governCall } from "../governance/governCall";
import { delegationPrincipal } from "../identity/authenticate";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import type { RunInfo } from "../sandbox/bridge";
import { depthOfRun, putEvent } from "./events";
import { EventBody } from "./schemas";

/**
 * `ctx.events.emit(type, payload)`: the emit operation through the governance gate under the
 * run's delegation, so it leaves its own provenance record (`POST /v1/events/emit`, actor the
 * run's delegate) and needs `svc_api:events:write` among the manifest's capabilities. The event's
 * depth is one more than the event that triggered the run; at SVC_EVENT_MAX_DEPTH the call is
 * refused and recorded (denied), and the guest's promise rejects with the reason.
 */
export async function emitFromRun(run: RunInfo, args: unknown[]): Promise<unknown> {
  const delegationId = run.context.delegationId as string;
  const executionId = run.context.executionId as string | undefined;
  const raw = { type: args[0], payload: args[1] ?? {} };
  try {
    const { value } = await governCall(
      { id: "emitEvent", label: "POST /v1/events/emit", capability: "svc_api:events:write", resourceType: "event", write: true, successStatus: 202 },
      { authorization: null, clientAddress: "sandbox", requestId: newId("req"), authenticate: async () => delegationPrincipal((await database()).read, delegationId) },
      async () => ({ requestHash: requestHash(raw) }),
      async (scope) => {
        const parsed = EventBody.safeParse(raw);
        if (!parsed.success) throw ValidationFailed(parsed.error.issues.map((i) => ({ field: i.path.join(".") || "type", code: "INVALID_FORMAT", message: i.message })));
        const depth = executionId ? await depthOfRun(scope.db, executionId) : 0;
        return putEvent(scope, parsed.data, "emit", depth);
      },
    );
    return value;
  } catch (e) {
    const inner = (e as { error?: unknown }).error ?? e;
    const err = new Error(inner instanceof Error ? inner.message : String(inner));
    err.name = (inner as { code?: string }).code ?? "EmitRefused";
    throw err;
  }
}
