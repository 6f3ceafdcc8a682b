import { createHash } from "node:crypto";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * `npm pack` in sdk/ rebuilds sdk/dist (its prepack removes it first), and the suites that pack it
 * (the SDK's test in each engine's project, the README's snippet) run at the same time: one pack
 * could read dist/ while another had just removed it. They take turns through this lock, a
 * directory per checkout (mkdir is atomic); a holder that died leaves it stale after 5 minutes.
 */
const LOCK = join(
  tmpdir(),
  `svc-sdk-pack-${createHash("sha256").update(process.cwd()).digest("hex").slice(0, 12)}.lock`,
);
const STALE_MS = 5 * 60_000;

export async function withSdkPackLock<T>(fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
