import { processWide } from "../processWide";
/** The PostgreSQL channel enqueueing transactions notify; its payload is the job's kind. */
export const JOBS_CHANNEL = "svc_jobs";

// The running workers of this process, woken straight after a local commit (on SQLite the only
// wake-up besides the poll; on PostgreSQL it saves the NOTIFY round trip).
const wakers = processWide("jobs.wakers", () => new Set<(kind: string) => void>());

export function onJobEnqueued(fn: (kind: string) => void): () => void {
  wakers.add(fn);
  return () => wakers.delete(fn);
}

export function wakeWorkers(kind: string): void {
  // From a clean turn of the event loop: a claim started from the waker's async context would
  // inherit a write lock its caller might still hold.
  if (wakers.size > 0)
    setImmediate(() => {
      for (const fn of wakers) fn(kind);
    });
}
