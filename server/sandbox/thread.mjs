// The worker-thread entry of a sandbox slot (see pool.ts for the protocol). One run at a time:
// while a guest computes, this thread is blocked inside the WASM, so cancellation reaches it
// through a shared flag that the interrupt handler reads, not through a message.
import { parentPort, workerData } from "node:worker_threads";
import { prepareSpare, runHandler, warmUp } from "./runHandler.mjs";

const port = parentPort;
if (!port) throw new Error("server/sandbox/thread.mjs is a worker-thread entry");

let nextCall = 0;
/** @type {Map<number, { resolve: (json: string) => void, reject: (e: Error) => void }>} */
const waiting = new Map();
/** @type {{ runId: string, cancel: () => void } | undefined} */
let active;
/**
 * The warm-up (seconds on a loaded machine): a run that arrives meanwhile starts after it, so that
 * its time limit (which starts with the run) is not spent on the thread's own start.
 */
const warmed = warmUp(workerData?.memoryBytes ?? 64 * 1024 * 1024).then(
  () => port.postMessage({ type: "ready" }),
  (e) => port.postMessage({ type: "ready", error: String(e?.message ?? e) }),
);

port.on("message", (m) => {
  if (m.type === "reply") {
    const w = waiting.get(m.callId);
    if (!w) return;
    waiting.delete(m.callId);
    if (m.error) w.reject(Object.assign(new Error(String(m.error.message)), { name: String(m.error.name ?? "Error") }));
    else w.resolve(m.value);
  } else if (m.type === "cancel") {
    if (active?.runId === m.runId) active.cancel();
  } else if (m.type === "run") {
    void run(m);
  }
});

async function run(m) {
  await warmed;
  const cancelFlag = new Int32Array(m.cancel);
  const mine = new Set();
  /** @type {(() => void) | undefined} */
  let onCancel;
  active = { runId: m.runId, cancel: () => onCancel?.() };
  const outcome = await runHandler(
    {
      mode: m.mode,
      code: m.code,
      input: m.input,
      memoryBytes: m.memoryBytes,
      timeoutMs: m.timeoutMs,
      orgDid: m.orgDid,
      entries: m.entries,
      cancelFlag,
    },
    {
      call: (name, json) =>
        new Promise((resolve, reject) => {
          const callId = ++nextCall;
          mine.add(callId);
          waiting.set(callId, { resolve, reject });
          port.postMessage({ type: "call", runId: m.runId, callId, name, args: json });
        }),
      notify: (kind, values) => port.postMessage({ type: "notify", runId: m.runId, kind, values }),
      onCancel: (listener) => {
        onCancel = listener;
        if (Atomics.load(cancelFlag, 0) === 1) listener();
      },
    },
  );
  // Answers that arrive after the run ended have nobody to go to.
  for (const id of mine) waiting.delete(id);
  active = undefined;
  port.postMessage({ type: "done", runId: m.runId, outcome });
  // The next organization (or this one after a fault) finds an instance ready.
  setImmediate(() => {
    if (!active) prepareSpare(m.memoryBytes);
  });
}
