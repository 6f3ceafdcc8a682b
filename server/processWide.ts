/**
 * One copy of the server's state per process. Next.js bundles its own copy of the `server/`
 * modules beside the ones the node:http fast path, the worker and the tests load (tsx), so a
 * module-level `new Map()` would exist twice in one process: two rate-limit windows for one caller,
 * two token caches, two job-kind registries of which one stays empty, a sandbox pool built from a
 * bridge registry lacking entries… Every piece of module-level state lives here instead, under a
 * name, and whichever copy asks first creates it; the others get the same object.
 *
 * Pure (no Node-only import): the capability catalogue, which console forms import, keeps its
 * offered set here too. `tests/integration/moduleCopies.test.ts` loads the modules twice and checks
 * each state is one, and that no module keeps state of its own outside this helper.
 */

const STORE = Symbol.for("svc.processWide");
const slot = globalThis as typeof globalThis & { [STORE]?: Map<string, unknown> };
const store = (slot[STORE] ??= new Map<string, unknown>());
const CREATORS = Symbol.for("svc.processWide.creators");
const creatorSlot = globalThis as typeof globalThis & { [CREATORS]?: Map<string, () => unknown> };
const creators = (creatorSlot[CREATORS] ??= new Map<string, () => unknown>());

/**
 * The process's `name` state, created by `create` on first use. Names are `<folder>.<what>`
 * (`http.rateLimitWindows`); a name is one state, so two modules never share one by accident.
 */
export function processWide<T>(name: string, create: () => T): T {
  if (!store.has(name)) {
    store.set(name, create());
    creators.set(name, create);
  }
  return store.get(name) as T;
}

/** The names of the states created so far in this process (tests). */
export function processWideNames(): string[] {
  return [...store.keys()];
}

/**
 * Puts every state back as its creator made it, in place (the same object, emptied or with its
 * fields reset), except the names in `keep`. Tests only: the integration suite runs its files in
 * one process one after another (vitest `isolate: false`), each on a database of its own, and
 * what a module captured at import (`const held = processWide(…)`) must be the object the next
 * file starts from, not a copy beside it. Registries come back empty; the test set-up fills them
 * again from the composition root, as a process's start does.
 */
export function resetProcessWide(keep: ReadonlySet<string> = new Set()): void {
  for (const [name, value] of store) {
    if (keep.has(name)) continue;
    const create = creators.get(name);
    if (value instanceof Map || value instanceof Set) value.clear();
    else if (value instanceof WeakSet || value instanceof WeakMap) continue;
    else if (value && typeof value === "object" && create) {
      // A timer the state holds (a periodic flush) would go on running, unreachable, beside the
      // one the state starts again: it stops with the state it belonged to.
      for (const field of Object.values(value)) if (isNodeTimer(field)) clearTimeout(field);
      const fresh = create() as object;
      for (const key of Object.keys(value)) if (!(key in fresh)) delete (value as Record<string, unknown>)[key];
      Object.assign(value, fresh);
    }
  }
}

/** A Node.js timer (`setTimeout`/`setInterval`'s Timeout object; in a browser timers are numbers). */
function isNodeTimer(value: unknown): value is ReturnType<typeof setTimeout> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { hasRef?: unknown }).hasRef === "function" &&
    typeof (value as { refresh?: unknown }).refresh === "function"
  );
}
