import { SandboxPool } from "../server/sandbox/pool";
import { machineLoad } from "./lib/machine";

/**
 * sandbox: a run's cost on a warm pool (server/sandbox/pool.ts): 200 runs one after another of a
 * handler that reports progress and returns, p50/p99/max from the caller's side.
 * server/sandbox/pool.test.ts checks what the runs return. `npm run bench -- sandbox`.
 */
export async function sandbox(): Promise<void> {
  const pool = new SandboxPool({ size: 2 });
  try {
    await pool.warm();
    const code = `export default async (input, ctx) => { await ctx.progress(50); return { n: input.n }; }`;
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const out = await pool.run({ code, input: { n: i }, memoryMb: 64, timeoutMs: 1000, orgDid: "did:svc:org:bench" });
      times.push(performance.now() - t);
      if (!out.ok) throw new Error(`run ${i} failed: ${JSON.stringify(out)}`);
    }
    times.sort((x, y) => x - y);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2);
    console.log(
      `\nsandbox: a run on a warm pool, 200 runs: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms (${machineLoad()})`,
    );
  } finally {
    await pool.shutdown();
  }
}
