/**
 * Exponential backoff with equal jitter: the wait for retry `attempt` (1 = after the first failure)
 * is d/2 + random·d/2 with d = min(cap, base·2^(attempt−1)). Half of it is guaranteed, so a
 * failing dependency gets a breather; the random half keeps retries of a burst from arriving in step.
 */
export function backoffDelay(attempt: number, baseMs = 1000, capMs = 300_000): number {
  const d = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(d / 2 + Math.random() * (d / 2));
}
