// Fails on purpose, with probability `input.failure_rate` (default 0.7), to show retries: the
// execution goes back to `queued` with backoff while current_attempt < max_attempts, and ends
// `failed` with the last error when every attempt failed. Invoke with {"max_attempts": 5}.
export default async (input, ctx) => {
  const rate = Number(input?.failure_rate ?? 0.7);
  ctx.progress(50, "calling the flaky dependency");
  if (Math.random() < rate) throw new Error("the upstream service answered 503");
  return { ok: true };
};
