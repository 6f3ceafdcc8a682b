import { processWide } from "../processWide";
import type { Operation } from "./operation";

/**
 * Every governed /v1 operation, as the composition root hands them down (`composeServer` in
 * server/areas.ts, which every entry point calls before serving): the routing table
 * (server/http/router.ts) and the OpenAPI document are built from this list. The mechanisms never
 * import the root, which imports every area and so, through them, the mechanisms themselves.
 */
const registry = processWide("http.operations", () => ({ operations: undefined as readonly Operation[] | undefined }));

/** Registers the root's operations, in the root's order (a second call replaces the first). */
export function registerOperations(operations: readonly Operation[]): void {
  registry.operations = [...operations];
}

/**
 * The registered operations. Before composition this throws rather than answering an empty list:
 * a routing table without its operations would refuse every /v1 call with a 404.
 */
export function registeredOperations(): readonly Operation[] {
  if (!registry.operations)
    throw new Error("No /v1 operations are registered: the entry point calls composeServer() (server/areas.ts) first.");
  return registry.operations;
}
