import { recordUnit } from "./figures";
import { runLoad } from "./load";
import { cpuMs, serverProcessPid, startServer, stopServer } from "./server";

/** The unit's load: as many bare requests as the governed-call bench's c=32 runs send. */
const CONNECTIONS = 32;
const WARM_UP = 2_000;
const MEASURED = 6_000;

/**
 * The unit every CPU figure is given in: the server's CPU per bare request (`GET /livez`: no auth,
 * no database) through the same production server (`scripts/start.mjs`), measured in this run.
 * Machines here differ 2× in speed and load moves every figure, so an absolute target misleads;
 * a multiple of what the same machine spends on doing (almost) nothing does not. `npm run bench`
 * measures it before the benches and again after them, and prints both (their spread tells how
 * much the machine's state drifted during the run).
 */
export async function measureUnit(when: "before" | "after"): Promise<number> {
  const server = await startServer();
  try {
    const pid = serverProcessPid(server);
    if (pid === undefined) throw new Error("could not find the server/main.ts process under scripts/start.mjs");
    const url = `${server.baseUrl}/livez`;
    await runLoad({ label: "unit warm-up", url, connections: CONNECTIONS, amount: WARM_UP });
    const before = cpuMs(pid) ?? Number.NaN;
    const run = await runLoad({ label: "unit", url, connections: CONNECTIONS, amount: MEASURED });
    const unitMs = ((cpuMs(pid) ?? Number.NaN) - before) / Math.max(1, run.responses);
    if (!Number.isFinite(unitMs) || unitMs <= 0) throw new Error(`the unit came out as ${unitMs} ms`);
    recordUnit({ when, unitMs, rps: run.rps });
    console.log(
      `unit (${when}): ${unitMs.toFixed(2)} ms of server CPU per bare GET /livez (${Math.round(run.rps)} req/s at c=${CONNECTIONS}, ${run.responses} requests)`,
    );
    return unitMs;
  } finally {
    await stopServer(server);
  }
}
