import { parentPort } from "node:worker_threads";
import { hashChunk } from "./leafChunk";

/**
 * A worker thread of `svc verify --export` (bundled as dist/cli/verify-worker.mjs): it checks
 * the runs of lines it is sent (their bytes, moved rather than copied), in the order sent, and
 * answers each with its ChunkResult, whose byte arrays are moved back the same way.
 */
parentPort!.on("message", (bytes: Uint8Array) => {
  const result = hashChunk(bytes);
  const moved = [result.leaves.buffer as ArrayBuffer];
  if (result.range) moved.push(result.range.hashes.buffer as ArrayBuffer);
  parentPort!.postMessage(result, moved);
});
