import { processWide } from "../processWide";
/**
 * The registry of `ctx` entries a bundle can call. The guest's `ctx` is built from the registered
 * names (`events.emit` becomes `ctx.events.emit`) and frozen; each call is a message to the host,
 * answered by the entry's handler. The composition root (server/areas.ts) registers the areas'
 * governed entries here (each handler goes through the governance gate with the run's
 * delegation); the sandbox knows nothing of them.
 *
 * `progress` and `log` are built in: they are the run's telemetry, handled by the callbacks the
 * caller of `runBundle` passes (`onProgress`, `onLog`), because persisting them belongs to whoever
 * owns the run.
 */

/** What the caller of `runBundle` attaches to a run for its entries to read (ids of the run, its delegation...). Areas may augment it. */
export interface RunContext {
  [key: string]: unknown;
}

/** The run a bridge call comes from. */
export interface RunInfo {
  runId: string;
  orgDid: string;
  context: RunContext;
  /** Aborted when the run ends, however it ends: long host calls should stop then. */
  signal: AbortSignal;
}

/**
 * Answers one guest call. `args` are the guest's arguments, through JSON. The resolved value goes
 * back through JSON (undefined becomes null); a rejection rejects the guest's promise with an
 * Error carrying the same `name` and `message`, so messages must be fit for the bundle to read.
 */
export type BridgeHandler = (run: RunInfo, args: unknown[]) => Promise<unknown>;

/** What a caller of `runBundle` gives its run: the context its entries read, and the callbacks of the built-in entries. */
export interface RunBridge {
  context?: RunContext;
  /** The entries this run offers; by default every registered one (`bridgeEntries()` when the run starts). */
  entries?: ReadonlyMap<string, BridgeHandler>;
  /** `ctx.progress(percent, message?)`: percent is an integer 0..100 (checked in the guest). */
  onProgress?: (percent: number, message: string | undefined) => void | Promise<void>;
  /** `ctx.log(...)` and `console.*`: one line (at most 2,048 characters, 200 lines a run), stringified inside the sandbox. */
  onLog?: (line: string, level: "debug" | "info" | "warn" | "error") => void | Promise<void>;
}

export const BUILT_IN_ENTRIES = ["progress", "log"] as const;
const NAME = /^[a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)*$/;

const registry = processWide("sandbox.bridgeEntries", () => new Map<string, BridgeHandler>());

/**
 * Adds `ctx.<name>` to every run started after this call. Returns a function that removes it
 * (tests). Registering a name twice, a built-in name, or a name that would make one entry the
 * parent object of another (`events` and `events.emit`) is a programming error and throws.
 */
export function registerBridgeEntry(name: string, handler: BridgeHandler): () => void {
  if (!NAME.test(name)) throw new TypeError(`Bridge entry names are dotted identifiers, got ${JSON.stringify(name)}`);
  const top = name.split(".")[0]!;
  if ((BUILT_IN_ENTRIES as readonly string[]).includes(top)) throw new TypeError(`ctx.${top} is built in`);
  if (registry.has(name)) throw new TypeError(`ctx.${name} is already registered`);
  for (const other of registry.keys()) {
    if (other.startsWith(`${name}.`) || name.startsWith(`${other}.`))
      throw new TypeError(`ctx.${name} and ctx.${other} cannot both exist`);
  }
  registry.set(name, handler);
  return () => {
    if (registry.get(name) === handler) registry.delete(name);
  };
}

/** The entries registered now; a run keeps the set it started with. */
export function bridgeEntries(): ReadonlyMap<string, BridgeHandler> {
  return new Map(registry);
}
