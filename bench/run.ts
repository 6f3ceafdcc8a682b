import { governedCall } from "./governed-call";

/**
 * `npm run bench`: every benchmark, one after the other (they would distort each other if run
 * together). Each starts and stops its own server. Targets are informational: a miss is printed,
 * not failed on; only a bench that could not run at all fails the command.
 */
const benches: Array<[name: string, run: () => Promise<void>]> = [["governed-call", governedCall]];

for (const [name, run] of benches) {
  try {
    await run();
  } catch (e) {
    console.error(`\n${name} failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}
