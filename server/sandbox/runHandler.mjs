// One run of a bundle inside this thread's QuickJS instance. Plain JavaScript so that the worker
// thread loads it with Node alone, whatever loaded the host (tsx, vitest, Next.js's server).
import { newQuickJSWASMModuleFromVariant, newVariant, shouldInterruptAfterDeadline } from "quickjs-emscripten-core";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { preludeSource } from "./prelude.mjs";

const PAGE = 64 * 1024;
// C stack, static data and allocator slack above the run's own limit; the module needs 256 pages.
const HEADROOM = 8 * 1024 * 1024;
const MIN_PAGES = 256;
// Deeper lets a guest recursion overflow V8's own stack from inside the WASM (measured); 256 KiB
// still allows more than 1000 frames.
const STACK_BYTES = 256 * 1024;

/** @type {Promise<WebAssembly.Module> | undefined} */
let compiled;
/** @type {{ key: string, memoryBytes: number, module: any } | undefined} */
let current;
/** A fresh instance made while the thread was idle, adopted by the next key that needs one. */
/** @type {{ memoryBytes: number, module: Promise<any> } | undefined} */
let spare;

/** @param {number} memoryBytes */
async function freshInstance(memoryBytes) {
  compiled ??= WebAssembly.compile(
    readFileSync(createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/wasm")),
  );
  // QuickJS's setMemoryLimit does not count large strings and typed arrays in this build
  // (quickjs-emscripten #255, #271); a WebAssembly.Memory that cannot grow past the limit does.
  const maximum = Math.max(MIN_PAGES, Math.ceil((memoryBytes + HEADROOM) / PAGE));
  return newQuickJSWASMModuleFromVariant(
    newVariant(releaseSync, {
      wasmModule: await compiled,
      wasmMemory: new WebAssembly.Memory({ initial: MIN_PAGES, maximum }),
      emscriptenModule: { print: () => {}, printErr: () => {} },
    }),
  );
}

/**
 * Compiles the engine, runs a trivial bundle a few times (V8 optimises the engine's hot paths
 * only after some use) and prepares a fresh instance, so that the first real run pays for none of it.
 */
export async function warmUp(memoryBytes) {
  const cancelFlag = new Int32Array(new SharedArrayBuffer(4));
  const hooks = { call: async () => "null", notify: () => {}, onCancel: () => {} };
  const code =
    "export default async (i, ctx) => { await ctx.progress(50, 'warm'); ctx.log(i); await ctx.warm.call(i); return i; }";
  for (let i = 0; i < 30; i++)
    await runHandler(
      { mode: "run", code, input: { i }, memoryBytes, timeoutMs: 5000, orgDid: "", entries: ["warm.call"], cancelFlag },
      hooks,
    );
  dropInstance();
  prepareSpare(memoryBytes);
  await spare?.module;
}

/** @param {number} memoryBytes */
export function prepareSpare(memoryBytes) {
  if (spare && spare.memoryBytes === memoryBytes) return;
  const module = freshInstance(memoryBytes);
  module.catch(() => {
    if (spare?.module === module) spare = undefined;
  });
  spare = { memoryBytes, module };
}

// An organization's runs share an instance only with its own earlier clean runs, never with
// another organization's leftovers; a fault of any kind drops it.
async function instanceFor(orgDid, memoryBytes) {
  const key = `${memoryBytes}:${orgDid}`;
  if (current?.key === key) return current.module;
  current = undefined;
  let module;
  if (spare?.memoryBytes === memoryBytes) {
    module = await spare.module.catch(() => undefined);
    spare = undefined;
  }
  module ??= await freshInstance(memoryBytes);
  current = { key, memoryBytes, module };
  return module;
}

function dropInstance() {
  current = undefined;
}

const MEMORY_MESSAGE =
  /out of memory|invalid (string|array|array buffer) length|array buffer allocation failed|OOM|memory access out of bounds/i;

/**
 * @typedef {{ code: string, message: string, name?: string, stack?: string }} SandboxError
 * @typedef {{ ok: true, result?: unknown } | { ok: false, error: SandboxError }} Outcome
 * @typedef {{
 *   mode: "run" | "check", code: string, input?: unknown, memoryBytes: number, timeoutMs: number,
 *   orgDid: string, entries: string[], cancelFlag: Int32Array,
 * }} RunRequest
 * @typedef {{
 *   call: (name: string, json: string) => Promise<string>,
 *   notify: (kind: string, values: unknown[]) => void,
 *   onCancel: (listener: () => void) => void,
 * }} RunHooks
 */

/**
 * Runs (mode "run") or only loads (mode "check") a bundle. Never throws: every way a run can end
 * is an Outcome, with the error codes of the sandbox's contract.
 * @param {RunRequest} req
 * @param {RunHooks} hooks
 * @returns {Promise<Outcome>}
 */
export async function runHandler(req, hooks) {
  const deadline = Date.now() + req.timeoutMs;
  /** @type {string | null} why the host stopped the run: "timeout" | "cancelled" */
  let stopped = null;
  let faulted = true;
  let finished = false;
  const handles = []; // every handle this run owns: all disposed before the runtime, or JS_FreeRuntime asserts
  const own = (h) => (handles.push(h), h);
  /** @type {(outcome: Outcome) => void} */
  let abort = () => {};
  const aborted = new Promise((resolve) => {
    abort = resolve;
  });
  hooks.onCancel(() => {
    stopped ??= "cancelled";
    abort({ ok: false, error: { code: "cancelled", message: "The run was cancelled" } });
  });
  let QuickJS, runtime, vm;
  try {
    QuickJS = await instanceFor(req.orgDid, req.memoryBytes);
    if (Atomics.load(req.cancelFlag, 0) === 1) {
      faulted = false;
      return { ok: false, error: { code: "cancelled", message: "The run was cancelled" } };
    }
    runtime = QuickJS.newRuntime();
    runtime.setMemoryLimit(req.memoryBytes);
    runtime.setMaxStackSize(STACK_BYTES);
    const timeUp = shouldInterruptAfterDeadline(deadline);
    runtime.setInterruptHandler((rt) => {
      if (Atomics.load(req.cancelFlag, 0) === 1) return ((stopped ??= "cancelled"), true);
      if (timeUp(rt)) return ((stopped ??= "timeout"), true);
      return false;
    });
    vm = runtime.newContext();
    const guestError = (errH) => describe(vm, own(errH), stopped);

    // Runs the guest's queued promise jobs; an interrupt or fault there ends the run.
    const drain = () => {
      if (finished || !runtime.alive) return;
      const r = runtime.executePendingJobs();
      if (r.error) abort({ ok: false, error: guestError(r.error) });
    };

    const callH = own(
      vm.newFunction("__svcCall", (nameH, jsonH) => {
        const name = vm.getString(nameH);
        const json = vm.getString(jsonH);
        const deferred = own(vm.newPromise());
        hooks.call(name, json).then(
          (valueJson) => {
            if (finished || !deferred.alive) return;
            const s = vm.newString(valueJson);
            deferred.resolve(s);
            s.dispose();
            drain();
          },
          (e) => {
            if (finished || !deferred.alive) return;
            const errH = vm.newError({ name: String(e?.name ?? "Error"), message: String(e?.message ?? e) });
            deferred.reject(errH);
            errH.dispose();
            drain();
          },
        );
        return deferred.handle.dup();
      }),
    );
    const notifyH = own(
      vm.newFunction("__svcNotify", (kindH, ...valueHs) => {
        hooks.notify(
          vm.getString(kindH),
          valueHs.map((h) => vm.dump(h)),
        );
      }),
    );
    vm.setProp(vm.global, "__svcCall", callH);
    vm.setProp(vm.global, "__svcNotify", notifyH);
    const preludeR = vm.evalCode(preludeSource(req.entries), "svc:prelude.js", { type: "global" });
    if (preludeR.error) return { ok: false, error: internal(guestError(preludeR.error)) };
    const svcH = own(preludeR.value);

    /** Drives a guest promise to completion: runs its jobs, waits for host answers, enforces the deadline. */
    const settle = async (promiseH) => {
      const native = vm.resolvePromise(promiseH);
      drain();
      let timer;
      const limit = new Promise((resolve) => {
        timer = setTimeout(
          () => {
            stopped ??= "timeout";
            resolve({ ok: false, error: stopError("timeout") });
          },
          Math.max(0, deadline - Date.now()),
        );
      });
      try {
        const r = await Promise.race([native.then((x) => ({ settled: x })), limit, aborted]);
        if (!("settled" in r)) throw r;
        if (r.settled.error) throw { ok: false, error: guestError(r.settled.error) };
        return own(r.settled.value);
      } finally {
        clearTimeout(timer);
      }
    };

    const modR = vm.evalCode(req.code, "bundle.js", { type: "module" });
    if (modR.error) {
      const error = guestError(modR.error);
      if (error.code === "handler_error" && error.name === "SyntaxError") error.code = "syntax_error";
      faulted = error.code !== "handler_error" && error.code !== "syntax_error";
      return { ok: false, error };
    }
    // Without top-level await the namespace itself; with it, a promise of the namespace.
    const nsH = await settle(own(modR.value));
    const fnH = own(vm.getProp(nsH, "default"));
    if (vm.typeof(fnH) !== "function") {
      faulted = false;
      return {
        ok: false,
        error: {
          code: "no_handler",
          message: "The bundle's default export is not a function: export default async (input, ctx) => result",
        },
      };
    }
    if (req.mode === "check") {
      faulted = false;
      return { ok: true };
    }

    const ctxH = own(vm.getProp(svcH, "ctx"));
    const parseH = own(vm.getProp(svcH, "parse"));
    const finishH = own(vm.getProp(svcH, "finish"));
    const inputJsonH = own(vm.newString(JSON.stringify(req.input ?? null)));
    const inputR = vm.callFunction(parseH, vm.undefined, inputJsonH);
    if (inputR.error) throw { ok: false, error: guestError(inputR.error) };
    const inputH = own(inputR.value);
    const calledR = vm.callFunction(fnH, vm.undefined, inputH, ctxH);
    if (calledR.error) throw { ok: false, error: guestError(calledR.error) };
    const outH = await settle(own(calledR.value));
    const jsonR = vm.callFunction(finishH, vm.undefined, outH);
    if (jsonR.error) throw { ok: false, error: guestError(jsonR.error) };
    const json = vm.getString(own(jsonR.value));
    faulted = false;
    return { ok: true, result: JSON.parse(json) };
  } catch (e) {
    if (e && typeof e === "object" && e.ok === false) {
      // A handler that threw leaves the instance sound; limits, interrupts and host faults do not.
      faulted = e.error.code !== "handler_error";
      return e;
    }
    const message = String(e?.message ?? e);
    return {
      ok: false,
      error: stopped
        ? stopError(stopped)
        : { code: MEMORY_MESSAGE.test(message) ? "memory_limit" : "internal", message },
    };
  } finally {
    finished = true;
    for (const h of handles.reverse()) {
      try {
        if (h.alive) h.dispose();
      } catch {
        faulted = true;
      }
    }
    try {
      vm?.dispose();
      runtime?.dispose();
    } catch {
      faulted = true;
    }
    if (faulted) dropInstance();
  }
}

function stopError(code) {
  return code === "cancelled"
    ? { code, message: "The run was cancelled" }
    : { code, message: "The run passed its time limit" };
}

function internal(error) {
  return { ...error, code: "internal" };
}

/** Reads a thrown guest value without trusting it: plain property reads, no guest-defined toString. */
function describe(vm, errH, stopped) {
  if (stopped) return stopError(stopped);
  let name, message, stack;
  try {
    if (vm.typeof(errH) === "object") {
      const read = (prop) => {
        const h = vm.getProp(errH, prop);
        try {
          return vm.typeof(h) === "string" ? vm.getString(h) : undefined;
        } finally {
          h.dispose();
        }
      };
      name = read("name");
      message = read("message");
      stack = read("stack");
    }
    if (message === undefined) {
      const d = vm.dump(errH);
      message = typeof d === "string" ? d : (JSON.stringify(d) ?? String(d));
    }
  } catch (e) {
    // Reading the error itself failed: the heap is exhausted or the instance is broken.
    return { code: "memory_limit", message: String(e?.message ?? e) };
  }
  const text = `${name ?? ""}: ${message}`;
  let code = "handler_error";
  if (/^InternalError: stack overflow/.test(text) || (name === "RangeError" && /call stack/i.test(message)))
    code = "stack_overflow";
  else if ((name === "InternalError" || name === "RangeError" || name === undefined) && MEMORY_MESSAGE.test(message))
    code = "memory_limit";
  else if (name === "InternalError" && message === "interrupted") code = "timeout";
  const error = { code, message: String(message).slice(0, 4096) };
  if (name !== undefined) error.name = name;
  if (stack !== undefined && code === "handler_error") error.stack = stack.slice(0, 8192);
  return error;
}
