import { parentPort } from "node:worker_threads";
import { hashChunk } from "./leafChunk";

/**
 * A worker thread of `svc verify --export` (bundled as dist/cli/verify-worker.mjs): it checks
 * the runs of lines it is sent, in the order sent, and answers each with its ChunkResult.
 */
parentPort!.on("message", (bytes: Uint8Array) => {
  const result = hashChunk(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  parentPort!.postMessage(result, [result.leaves.buffer as ArrayBuffer]);
});
