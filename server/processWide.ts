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

/**
 * The process's `name` state, created by `create` on first use. Names are `<folder>.<what>`
 * (`http.rateLimitWindows`); a name is one state, so two modules never share one by accident.
 */
export function processWide<T>(name: string, create: () => T): T {
  if (!store.has(name)) store.set(name, create());
  return store.get(name) as T;
}

/** The names of the states created so far in this process (tests). */
export function processWideNames(): string[] {
  return [...store.keys()];
}
