import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { approvals } from "./approvals";
import { cli } from "./cli";
import { verify } from "./verify";
import { events } from "./events";
import { executions } from "./executions";
import { governedCall } from "./governed-call";
import { jobs } from "./jobs";
import { printFigures } from "./lib/figures";
import { ledger } from "./ledger";
import { ledgerWrites } from "./ledgerWrites";
import { marketplace } from "./marketplace";
import { marketplaceInvoke } from "./marketplaceInvoke";
import { prompts } from "./prompts";
import { reasoning } from "./reasoning";
import { sandbox } from "./sandbox";
import { scaleOut } from "./scale-out";
import { measureUnit } from "./lib/unit";
import { usage } from "./usage";
import { webhooks } from "./webhooks";
import { workflows } from "./workflows";

/**
 * `npm run bench`: every benchmark, one after the other (they would distort each other if run
 * together). Each starts and stops its own server or processes. Targets are informational: a miss
 * is printed, not failed on; only a bench that could not run at all fails the command. CPU targets
 * are in units of a bare request's CPU, measured before and after the benches (bench/lib/unit.ts).
 *
 * `npm run bench -- ledger` (or `npx tsx bench/run.ts ledger governed-call`) runs only the named ones.
 */
const benches: Array<[name: string, run: () => Promise<void>]> = [
  ["governed-call", governedCall],
  ["ledger", ledger],
  ["ledger-writes", ledgerWrites],
  ["jobs", jobs],
  ["executions", executions],
  ["events", events],
  ["webhooks", webhooks],
  ["marketplace", marketplace],
  ["marketplace-invoke", marketplaceInvoke],
  ["workflows", workflows],
  ["approvals", approvals],
  ["prompts", prompts],
  ["usage", usage],
  ["reasoning", reasoning],
  ["scale-out", scaleOut],
  ["sandbox", sandbox],
  ["cli", cli],
  ["verify", verify],
];

const names = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const unknown = names.filter((n) => !benches.some(([name]) => name === n));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(", ")} (there are: ${benches.map(([name]) => name).join(", ")})`);
  process.exit(2);
}

// The figures, gathered from every bench (and its children) and printed at the end.
const figuresFile = join(mkdtempSync(join(tmpdir(), "svc-bench-figures-")), "figures.ndjson");
process.env.BENCH_FIGURES_FILE = figuresFile;
// The unit (a bare request's server CPU), before and after the benches: every CPU figure is
// printed in it too. BENCH_UNIT=0 skips it (a quick look at one bench's own output).
const withUnit = process.env.BENCH_UNIT !== "0";
if (withUnit) await measureUnit("before");

for (const [name, run] of benches) {
  if (names.length > 0 && !names.includes(name)) continue;
  try {
    await run();
  } catch (e) {
    console.error(`\n${name} failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}
if (withUnit) await measureUnit("after");
printFigures(figuresFile);
