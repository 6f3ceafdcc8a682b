import { processWide } from "../processWide";
/**
 * Fixed one-minute windows per key (credential or client address, and route). Kept in process
 * memory, one set of windows per process whichever copy of this module counts (the /v1 fast path
 * and Next.js's bundle share them): with several processes each enforces the limit on its own
 * share of the traffic (README: scaling out).
 */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
  allowed: boolean;
}

const windows = processWide("http.rateLimitWindows", () => new Map<string, { start: number; count: number }>());
const WINDOW_MS = 60_000;

export function takeToken(key: string, limit: number, now = Date.now()): RateLimitState {
  const start = now - (now % WINDOW_MS);
  let w = windows.get(key);
  if (!w || w.start !== start) {
    if (windows.size > 100_000) for (const [k, v] of windows) if (v.start !== start) windows.delete(k);
    w = { start, count: 0 };
    windows.set(key, w);
  }
  const allowed = w.count < limit;
  if (allowed) w.count++;
  return { limit, remaining: Math.max(0, limit - w.count), reset: Math.ceil((start + WINDOW_MS) / 1000), allowed };
}

export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return { "X-RateLimit-Limit": String(s.limit), "X-RateLimit-Remaining": String(s.remaining), "X-RateLimit-Reset": String(s.reset) };
}
