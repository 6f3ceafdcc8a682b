import { config } from "../config";
import { database } from "../db/client";
import { DomainError, PayloadTooLarge } from "../errors";
import { refuseHostileInput } from "../http/validation";
import { delegationPrincipal } from "../identity/authenticate";
import { newId } from "../ids";
import { requestHash } from "../provenance/record";
import { governCall, operationSpec, type CallScope, type GovernedOperation } from "./governCall";

/**
 * Who an in-process call acts as: a delegation (a run's own, a workflow's). The gate resolves it
 * as it would a bearer token of it, so a delegation revoked or expired meanwhile is a recorded refusal.
 */
export interface ActingAs {
  delegationId: string;
}

export interface CallAsOptions<T> {
  /** Where the call comes from, in place of a network address (`sandbox`, `workflow`). */
  via: string;
  /** The call's request id (its record's `request_id`); a new `req_` id by default. */
  requestId?: string;
  /** What the record's `request_hash` covers, when not the whole input (a workflow node's body). */
  hashed?: unknown;
  /**
   * The size bound checked before the input is hashed or parsed: `bytes` over the JSON, answered as a
   * 413 naming `limit`. SVC_MAX_BODY_BYTES by default, as on /v1; `false` where the operation's own
   * schema bounds its input.
   */
  sizeLimit?: { bytes: number; limit: number } | false;
  /** The call itself, in the gate's scope: parses `input` with the operation's schema and does the work. */
  run(scope: CallScope): Promise<T>;
}

/**
 * Calls an operation in process as a delegation, through the governance gate exactly as its /v1
 * route would be called (authenticate → rate limit → capability → the input's hostile-shape and
 * size checks → run → one provenance record, refusals included). The one way the sandbox's bridge
 * and workflow nodes call an operation: the gate's inputs are built here, from the operation's
 * own declaration. Throws the gate's `GateError` on a refusal or a failure.
 */
export function callAs<T>(op: GovernedOperation, actingAs: ActingAs, input: unknown, options: CallAsOptions<T>) {
  const sizeLimit =
    options.sizeLimit === undefined
      ? { bytes: config().maxBodyBytes, limit: config().maxBodyBytes }
      : options.sizeLimit;
  return governCall(
    operationSpec(op),
    {
      authorization: null,
      clientAddress: options.via,
      requestId: options.requestId ?? newId("req"),
      authenticate: async () => delegationPrincipal((await database()).read, actingAs.delegationId),
    },
    async () => {
      // Iterative checks first: nothing recursive (hashing, the schema) sees what they refuse.
      refuseHostileInput(input, "body");
      if (sizeLimit && Buffer.byteLength(JSON.stringify(input ?? null)) > sizeLimit.bytes)
        throw PayloadTooLarge(sizeLimit.limit);
      return { requestHash: requestHash("hashed" in options ? options.hashed : input) };
    },
    options.run,
  );
}

/**
 * What a run's guest is told when a call it made through the bridge fails: a refusal's code as the
 * error's `name` and its reason (with its field errors) as `message`; a failure of svc itself
 * stays on the host, named `internal_error`, with `failed` saying what could not be done.
 */
export function guestError(e: unknown, failed: string): Error {
  const inner = (e as { error?: unknown }).error ?? e;
  if (inner instanceof DomainError && inner.status < 500) {
    const fields = inner.extra.errors?.map((f) => `${f.field}: ${f.message}`).join("; ");
    const err = new Error(fields ? `${inner.message} ${fields}` : inner.message);
    err.name = inner.code;
    return err;
  }
  const err = new Error(`${failed}: svc failed (the failure is in the service's log).`);
  err.name = "internal_error";
  return err;
}
