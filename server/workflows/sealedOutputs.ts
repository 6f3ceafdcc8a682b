import type { Operation } from "../http/operation";
import { openSealed, sealFields } from "../signing/sealedFields";

type Obj = Record<string, unknown>;

/** Sealed node values open only within their own workflow (a join copies them between its nodes). */
const context = (workflowId: string) => `svc workflow ${workflowId} node values`;

/** A `svc` node's output as stored: the fields its operation declares secret sealed. */
export const sealNodeOutput = (op: Operation, output: Obj, workflowId: string) =>
  sealFields(output, op.secretFields, context(workflowId));

/** Stored node values with their secrets open, for the run that passes them on (an agent's input, a condition). */
export const openNodeValues = <T>(value: T, workflowId: string) => openSealed(value, context(workflowId));
