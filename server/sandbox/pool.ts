import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { startSpan, type DetachedSpan } from "../telemetry/tracing";
import { BUILT_IN_ENTRIES, bridgeEntries, type BridgeHandler, type RunBridge, type RunInfo } from "./bridge";
import { processWide } from "../processWide";
import { logger } from "../telemetry/log";
import { sampleSandboxWith } from "../telemetry/metrics";

/**
 * The host side of the sandbox: a pool of worker threads, each running one bundle at a time in a
 * QuickJS WebAssembly instance (thread.mjs). Protocol:
 *   host → thread  {type:"run", runId, mode, code, input, memoryBytes, timeoutMs, orgDid, entries, cancel: SharedArrayBuffer}
 *                  {type:"cancel", runId}  ·  {type:"reply", callId, value | error}
 *   thread → host  {type:"ready"}  ·  {type:"call", runId, callId, name, args}  ·  {type:"notify", runId, kind, values}
 *                  {type:"done", runId, outcome}
 */

/** `code` is one of timeout, cancelled (or the code given to `cancel`), memory_limit, stack_overflow, no_handler, syntax_error, handler_error, internal. */
// The telemetry limits of prelude.mjs (LOG_LINE_CHARS, PROGRESS_MESSAGE_CHARS), enforced again on this side.
const LOG_LINE_CHARS = 2048;
const PROGRESS_MESSAGE_CHARS = 500;
const LOG_LEVELS = new Set(["debug", "info", "warn", "error"]);

export interface SandboxError {
  code: string;
  message: string;
  name?: string;
  stack?: string;
}
export type SandboxOutcome = { ok: true; result: unknown } | { ok: false; error: SandboxError };
export type CheckOutcome = { ok: true } | { ok: false; error: SandboxError };

export interface RunBundleRequest {
  /** An ES module whose default export is `async (input, ctx) => result`. */
  code: string;
  /** JSON input, given to the handler as its first argument. */
  input?: unknown;
  memoryMb: number;
  /** Wall-clock limit from the moment the run starts in its slot. */
  timeoutMs: number;
  /** Runs share a QuickJS instance only with earlier clean runs of the same organization. */
  orgDid: string;
  bridge?: RunBridge;
}

/** A run in progress: a promise of its outcome that can be cancelled. */
export type SandboxRun = Promise<SandboxOutcome> & {
  runId: string;
  /** Stops the run within a second; its error code becomes `code` (default `cancelled`). */
  cancel(code?: string): void;
};

/** If the thread has not answered this long after a cancel or past the deadline, it is terminated. */
const BACKSTOP_MS = 1000;
const MAX_MEMORY_MB = 2048;
const DEFAULT_MEMORY_MB = 64;
// Node's timers overflow past 2^31 - 1 ms (and fire at once).
const MAX_TIMEOUT_MS = 24 * 3600 * 1000;

interface PendingRun {
  runId: string;
  mode: "run" | "check";
  request: RunBundleRequest;
  entries: ReadonlyMap<string, BridgeHandler>;
  info: RunInfo;
  abort: AbortController;
  cancelFlag: Int32Array;
  cancelCode?: string;
  slot?: Slot;
  timers: NodeJS.Timeout[];
  resolve: (outcome: SandboxOutcome) => void;
  /** The run's span: its bridge calls (connector calls…) run in it, so they join the caller's trace. */
  span: DetachedSpan;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  markReady: () => void;
  /** The thread loaded and warmed up; one that never did is not respawned in a loop. */
  started: boolean;
  active?: PendingRun;
}

// The worker file is plain JavaScript beside this one, loaded by Node itself, never by a bundler:
// Next.js's Turbopack follows `new Worker(path)` and would bundle the engine and its .wasm, which
// it cannot. So the thread starts from a one-line script that imports the file by URL at run
// time. When this module has been bundled, the file is found from the project root instead.
function threadEntry(): string {
  const beside = join(dirname(fileURLToPath(import.meta.url)), "thread.mjs");
  const path = existsSync(/* turbopackIgnore: true */ beside)
    ? beside
    : join(/* turbopackIgnore: true */ process.cwd(), "server", "sandbox", "thread.mjs");
  return pathToFileURL(path).href;
}
const BOOT = `import(require("node:worker_threads").workerData.entry);`;

/** `SVC_SANDBOX_THREADS`, default one thread per CPU but one, at least one. */
export function defaultPoolSize(): number {
  const raw = process.env.SVC_SANDBOX_THREADS;
  if (raw === undefined || raw === "") return Math.max(1, availableParallelism() - 1);
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new Error(`SVC_SANDBOX_THREADS must be an integer from 1 to 256, got ${JSON.stringify(raw)}`);
  return n;
}

const runs = processWide("sandbox.runSequence", () => ({ seq: 0 }));

export class SandboxPool {
  readonly size: number;
  private slots: (Slot | undefined)[];
  private queue: PendingRun[] = [];
  private closed = false;

  constructor(options: { size?: number } = {}) {
    this.size = options.size ?? defaultPoolSize();
    this.slots = Array.from({ length: this.size }, () => undefined);
  }

  /** Starts every thread and waits until each has compiled the engine and prepared an instance. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((_, i) => this.slotAt(i).ready));
  }

  /** How many runs are executing and waiting; a job worker claims sandbox jobs only while `busy < size`. */
  stats(): { size: number; busy: number; queued: number } {
    return { size: this.size, busy: this.slots.filter((s) => s?.active).length, queued: this.queue.length };
  }

  /** Runs a bundle's handler with `input` and a `ctx` built from the bridge. Never rejects; limits out of range throw (a caller's bug). */
  run(request: RunBundleRequest): SandboxRun {
    return this.submit("run", request);
  }

  /** Loads a bundle without calling it: `no_handler` unless its default export is a function, `syntax_error` if it does not parse. */
  async check(request: { code: string; orgDid: string; memoryMb?: number; timeoutMs?: number }): Promise<CheckOutcome> {
    const outcome = await this.submit("check", {
      code: request.code,
      orgDid: request.orgDid,
      memoryMb: request.memoryMb ?? DEFAULT_MEMORY_MB,
      timeoutMs: request.timeoutMs ?? 5000,
    });
    return outcome.ok ? { ok: true } : outcome;
  }

  /** Terminates every thread; runs still waiting or running end as `cancelled`. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const run of this.queue.splice(0))
      this.finish(run, { ok: false, error: { code: "cancelled", message: "The sandbox shut down" } });
    await Promise.all(
      this.slots.map(async (slot, i) => {
        this.slots[i] = undefined;
        if (!slot) return;
        if (slot.active)
          this.finish(slot.active, { ok: false, error: { code: "cancelled", message: "The sandbox shut down" } });
        await slot.worker.terminate();
      }),
    );
  }

  private submit(mode: "run" | "check", request: RunBundleRequest): SandboxRun {
    const { memoryMb, timeoutMs } = request;
    if (!Number.isInteger(memoryMb) || memoryMb < 1 || memoryMb > MAX_MEMORY_MB)
      throw new RangeError(`memoryMb must be an integer from 1 to ${MAX_MEMORY_MB}`);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
      throw new RangeError(`timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}`);
    const runId = `run_${process.pid}_${++runs.seq}`;
    const abort = new AbortController();
    let resolve!: (outcome: SandboxOutcome) => void;
    const span = startSpan(`sandbox ${mode}`, { "svc.organization": request.orgDid, "svc.sandbox.run_id": runId });
    const promise = new Promise<SandboxOutcome>(
      (r) =>
        (resolve = (outcome) => {
          span.end(outcome.ok ? undefined : outcome.error.code);
          r(outcome);
        }),
    );
    const run: PendingRun = {
      runId,
      mode,
      request,
      entries: request.bridge?.entries ?? bridgeEntries(),
      info: { runId, orgDid: request.orgDid, context: request.bridge?.context ?? {}, signal: abort.signal },
      abort,
      cancelFlag: new Int32Array(new SharedArrayBuffer(4)),
      timers: [],
      resolve,
      span,
    };
    if (this.closed) resolve({ ok: false, error: { code: "cancelled", message: "The sandbox shut down" } });
    else {
      this.queue.push(run);
      this.pump();
    }
    return Object.assign(promise, { runId, cancel: (code?: string) => this.cancel(run, code ?? "cancelled") });
  }

  private cancel(run: PendingRun, code: string): void {
    if (run.abort.signal.aborted || run.cancelCode) return;
    run.cancelCode = code;
    const queued = this.queue.indexOf(run);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.finish(run, { ok: false, error: { code, message: "The run was cancelled before it started" } });
      return;
    }
    Atomics.store(run.cancelFlag, 0, 1);
    const slot = run.slot;
    if (!slot) return;
    // A guest waiting on the host is not in the WASM: the message reaches it; a busy guest reads the flag.
    slot.worker.postMessage({ type: "cancel", runId: run.runId });
    run.timers.push(setTimeout(() => this.kill(slot, { code, message: "The run was cancelled" }), BACKSTOP_MS));
  }

  private pump(): void {
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      const slot = this.slotAt(i);
      if (slot.active) continue;
      const [run] = this.queue.splice(this.nextFair(), 1);
      this.start(slot, run!);
    }
  }

  // When each organization last got a thread (a tick, not a time): the tie-break of `nextFair`.
  private lastStart = new Map<string, number>();
  private ticks = 0;

  /**
   * A per-organization share of the threads: the next run is the oldest of the organization that
   * holds the fewest threads now, and among those the one served longest ago. So one
   * organization's long runs never hold every thread while another's wait for more than the end
   * of one of them (with a single thread, organizations take turns), and an organization alone
   * still gets every thread.
   */
  private nextFair(): number {
    const held = new Map<string, number>();
    for (const s of this.slots)
      if (s?.active) held.set(s.active.request.orgDid, (held.get(s.active.request.orgDid) ?? 0) + 1);
    let best = 0;
    let bestKey: [number, number] | undefined;
    const seen = new Set<string>();
    for (let i = 0; i < this.queue.length; i++) {
      const org = this.queue[i]!.request.orgDid;
      if (seen.has(org)) continue;
      seen.add(org);
      const key: [number, number] = [held.get(org) ?? 0, this.lastStart.get(org) ?? -1];
      if (!bestKey || key[0] < bestKey[0] || (key[0] === bestKey[0] && key[1] < bestKey[1])) [best, bestKey] = [i, key];
    }
    const org = this.queue[best]!.request.orgDid;
    if (this.lastStart.size > 10_000) this.lastStart.clear();
    this.lastStart.set(org, ++this.ticks);
    return best;
  }

  private start(slot: Slot, run: PendingRun): void {
    slot.active = run;
    run.slot = slot;
    slot.worker.ref();
    const { code, input, memoryMb, timeoutMs, orgDid } = run.request;
    slot.worker.postMessage({
      type: "run",
      runId: run.runId,
      mode: run.mode,
      code,
      input,
      memoryBytes: memoryMb * 1024 * 1024,
      timeoutMs,
      orgDid,
      entries: [...run.entries.keys()],
      cancel: run.cancelFlag.buffer,
    });
    // The interrupt handler enforces the deadline; this only catches a thread stuck where it is never called.
    // A thread still warming up starts the run (and its deadline) when it is ready: so does this.
    const backstop = () =>
      run.timers.push(
        setTimeout(
          () => this.kill(slot, { code: "timeout", message: "The run passed its time limit" }),
          timeoutMs + BACKSTOP_MS,
        ),
      );
    if (slot.started) backstop();
    else void slot.ready.then(() => slot.active === run && backstop());
  }

  private slotAt(i: number): Slot {
    const existing = this.slots[i];
    if (existing) return existing;
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: { entry: threadEntry(), memoryBytes: DEFAULT_MEMORY_MB * 1024 * 1024 },
      // The thread is plain JavaScript: no loader flags, and nothing of the host's environment.
      execArgv: [],
      env: {},
      resourceLimits: { maxOldGenerationSizeMb: 96, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    let markReady!: () => void;
    const slot: Slot = { worker, ready: new Promise<void>((r) => (markReady = r)), markReady, started: false };
    worker.unref();
    worker.on("message", (m: ThreadMessage) => this.onMessage(slot, m));
    worker.on("error", (e: Error & { code?: string }) => {
      const memory = e.code === "ERR_WORKER_OUT_OF_MEMORY";
      this.kill(slot, {
        code: memory ? "memory_limit" : "internal",
        message: memory ? "The sandbox ran out of memory" : `The sandbox thread failed: ${e.message}`,
      });
    });
    worker.on("exit", () => this.kill(slot, { code: "internal", message: "The sandbox thread exited" }));
    this.slots[i] = slot;
    return slot;
  }

  private onMessage(slot: Slot, m: ThreadMessage): void {
    if (m.type === "ready") {
      if (m.error) logger().error(`sandbox thread failed to warm up: ${m.error}`);
      slot.started = true;
      slot.markReady();
      return;
    }
    const run = slot.active;
    if (!run || run.runId !== m.runId) return;
    if (m.type === "done") {
      slot.active = undefined;
      slot.worker.unref();
      const outcome = m.outcome.ok ? { ok: true as const, result: m.outcome.result ?? null } : m.outcome;
      if (!outcome.ok && run.cancelCode) outcome.error = { ...outcome.error, code: run.cancelCode };
      this.finish(run, outcome);
      this.pump();
    } else if (m.type === "notify") {
      this.notify(run, m.kind, m.values);
    } else if (m.type === "call") {
      void this.answer(slot, run, m.callId, m.name, m.args);
    }
  }

  /**
   * Telemetry from the guest, checked again here: the prelude's own checks run in the guest's
   * realm, where a bundle may have tampered with what they rely on. Anything out of shape is dropped.
   */
  private notify(run: PendingRun, kind: string, values: unknown[]): void {
    const bridge = run.request.bridge;
    const report = (e: unknown) => logger().error({ err: e }, `sandbox ${kind} callback failed`);
    try {
      let pending: void | Promise<void> | undefined;
      if (kind === "progress") {
        const [percent, message] = values;
        if (!Number.isInteger(percent) || (percent as number) < 0 || (percent as number) > 100) return;
        if (
          message !== undefined &&
          message !== null &&
          (typeof message !== "string" || message.length > PROGRESS_MESSAGE_CHARS)
        )
          return;
        pending = bridge?.onProgress?.(percent as number, message ?? undefined);
      } else if (kind === "log") {
        const [line, level = "info"] = values;
        if (typeof line !== "string" || line.length > LOG_LINE_CHARS || !LOG_LEVELS.has(level as string)) return;
        pending = bridge?.onLog?.(line, level as "debug" | "info" | "warn" | "error");
      }
      if (pending) pending.catch(report);
    } catch (e) {
      report(e);
    }
  }

  private async answer(slot: Slot, run: PendingRun, callId: number, name: string, args: string): Promise<void> {
    let reply: { value: string } | { error: { name: string; message: string } };
    try {
      const handler = run.entries.get(name);
      if (!handler || (BUILT_IN_ENTRIES as readonly string[]).includes(name))
        throw new TypeError(`ctx.${name} is not available`);
      const parsed: unknown = JSON.parse(args);
      const value = await run.span.within(() => handler(run.info, Array.isArray(parsed) ? parsed : []));
      reply = { value: JSON.stringify(value ?? null) ?? "null" };
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e));
      reply = { error: { name: err.name, message: err.message } };
    }
    if (slot.active !== run || this.slots.indexOf(slot) < 0) return;
    slot.worker.postMessage({ type: "reply", callId, ...reply });
  }

  /** Ends the slot's run (if any) with `error`, terminates its thread and starts a fresh one. */
  private kill(slot: Slot, error: SandboxError): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots[i] = undefined;
    const run = slot.active;
    slot.active = undefined;
    if (run) this.finish(run, { ok: false, error: run.cancelCode ? { ...error, code: run.cancelCode } : error });
    slot.markReady();
    void slot.worker.terminate();
    if (this.closed) return;
    if (slot.started) this.slotAt(i);
    else logger().error(`a sandbox thread failed to start: ${error.message}`);
    this.pump();
  }

  private finish(run: PendingRun, outcome: SandboxOutcome): void {
    if (run.abort.signal.aborted) return;
    for (const t of run.timers) clearTimeout(t);
    run.abort.abort();
    run.resolve(outcome);
  }
}

type ThreadMessage =
  | { type: "ready"; error?: string }
  | { type: "done"; runId: string; outcome: { ok: true; result?: unknown } | { ok: false; error: SandboxError } }
  | { type: "notify"; runId: string; kind: string; values: unknown[] }
  | { type: "call"; runId: string; callId: number; name: string; args: string };

// One pool per process, even when this module is loaded twice (tsx and a Next.js bundle).
const pool = processWide("sandbox.pool", () => ({ current: undefined as SandboxPool | undefined }));

/** The process's pool (`SVC_SANDBOX_THREADS` threads), started on first use. */
export function sandboxPool(): SandboxPool {
  if (!pool.current) sampleSandboxWith(() => pool.current?.stats());
  pool.current ??= new SandboxPool();
  return pool.current;
}

/** Runs a bundle in the process's pool; see `SandboxPool.run`. */
export function runBundle(request: RunBundleRequest): SandboxRun {
  return sandboxPool().run(request);
}

/** Checks a bundle in the process's pool (deploy); see `SandboxPool.check`. */
export function checkBundle(request: {
  code: string;
  orgDid: string;
  memoryMb?: number;
  timeoutMs?: number;
}): Promise<CheckOutcome> {
  return sandboxPool().check(request);
}

/** Stops the process's pool (process exit, tests). */
export async function shutdownSandbox(): Promise<void> {
  const current = pool.current;
  pool.current = undefined;
  await current?.shutdown();
}
