import type { Operation } from "../http/operation";
import { processWide } from "../processWide";
import type { KnownOperation } from "./validateDefinition";

/**
 * The platform's operations a `svc` node can call, by operation id. The composition root
 * (server/areas.ts) fills it from every area's operations at start: importing the operations
 * list here would make this area import every other one (and itself).
 */
const registry = processWide("workflows.nodeOperations", () => new Map<string, KnownOperation & { op: Operation }>());

export function registerNodeOperations(ops: readonly Operation[]): void {
  for (const op of ops) registry.set(op.id, { id: op.id, json: !op.responseType, op });
}

export function nodeOperation(id: string): Operation | undefined {
  return registry.get(id)?.op;
}

export function nodeOperations(): ReadonlyMap<string, KnownOperation> {
  return registry;
}
