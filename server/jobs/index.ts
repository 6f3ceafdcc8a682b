// The durable job queue: all background work, on SQLite and PostgreSQL behind one interface.
// It knows nothing of the areas; they register their kinds and enqueue in their own transactions.
export { backoffDelay } from "./backoff";
export { enqueue, enqueueMany, type EnqueueOptions } from "./enqueue";
export { finishJob, retryJob } from "./finishJob";
export { registerJobKind, registeredJobKinds, type JobKind } from "./registry";
export { LeaseLost, WorkerLost, type ClaimedJob, type JobHelpers } from "./types";
export { jobLeaseMs, standaloneWorkerRefusal, startJobWorker, type JobWorker, type JobWorkerOptions } from "./worker";
