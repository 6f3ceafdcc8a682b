#!/usr/bin/env node
// `npm test`: every suite: type check, lint (module boundaries, eslint.config.mjs) and format beside
// the end-to-end build, then unit, integration on SQLite and on PostgreSQL, Playwright end-to-end. Ends with one line
// "tests: N passed, N failed, N skipped" (CI parses it; keep it exactly so). A failed type check or
// lint counts as one failed test there.
// A flaky test (failed, then passed on a retry: Playwright retries under CI, vitest when a test
// asks to) counts as passed, and is listed on its own "flaky: N" line before the closing line.
// Under CI a flaky test fails the run: a retry that hides a race is how races reach production.
// The PostgreSQL suite runs against TEST_POSTGRES_URL (default: the local server). If that server
// cannot be reached, the suite is skipped with a warning, except under CI (CI=true) or
// SVC_REQUIRE_POSTGRES=1, where a skipped suite is a failure.
// The two integration projects run at the same time, one vitest worker each, one per core: each
// file has its own database and listens on port 0, so they share nothing. Each prints its output
// whole when it ends (not interleaved). SVC_TEST_SERIAL=1 runs them one after the other.
// `--only unit,sqlite,postgres,e2e` (any of them) runs those parts alone, without the checks.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = (name) => join(root, "node_modules/.bin", name);
const results = join(root, "test-results");
mkdirSync(results, { recursive: true });
const strict = process.env.CI === "true" || process.env.CI === "1" || process.env.SVC_REQUIRE_POSTGRES === "1";
const totals = { passed: 0, failed: 0, skipped: 0 };
const flaky = [];
let failedSuites = [];
/** The failed vitest tests, repeated at the end: CI keeps only the tail of the output. */
const failedTests = [];

/** Wall time of each part, printed before the closing line: where a slow run spent its time. */
const partTimes = [];
const startedAt = Date.now();
const onlyArg = process.argv.find((a) => a.startsWith("--only"));
const only = onlyArg
  ? new Set(
      (onlyArg.includes("=") ? onlyArg.split("=")[1] : process.argv[process.argv.indexOf(onlyArg) + 1]).split(","),
    )
  : undefined;
const wanted = (part) => !only || only.has(part);

function run(name, cmd, args, env = {}, part = name) {
  console.log(`\n▶ ${name}`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...env } });
  partTimes.push([part, Date.now() - started]);
  if (r.status !== 0) failedSuites.push(name);
  return r.status === 0;
}

async function postgresReachable() {
  const url = process.env.TEST_POSTGRES_URL || "postgresql://postgres@127.0.0.1:5432/postgres";
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (e) {
    console.warn(`PostgreSQL at ${url} is not reachable: ${e.message}`);
    return false;
  }
}

/** As `run`, in the background, its output kept in `log` and printed whole when it ends. */
function runQuietly(name, cmd, args, env, part, log) {
  const started = Date.now();
  const fd = openSync(log, "w");
  const child = spawn(cmd, args, { cwd: root, stdio: ["ignore", fd, fd], env: { ...process.env, ...env } });
  return new Promise((resolve) => {
    child.on("close", (code) => {
      closeSync(fd);
      partTimes.push([part, Date.now() - started]);
      console.log(`\n▶ ${name}`);
      process.stdout.write(readFileSync(log, "utf8"));
      if (code !== 0) failedSuites.push(name);
      resolve(code === 0);
    });
  });
}

// The checks and the end-to-end build at once: tsc, eslint and prettier are single-threaded, so
// one after another they left a core idle for a minute and a half; `next build` fills it. The type
// check reads none of what the build writes (tsconfig.check.json). Each prints its output whole
// when it ends. The build is skipped when fresh; a failed build skips the journeys.
const checks = [];
if (!only) {
  const check = (name, args, part) =>
    runQuietly(name, bin(args[0]), args.slice(1), {}, part, join(results, `${part.replace(/ /g, "-")}.log`)).then(
      (ok) => ok || totals.failed++,
    );
  checks.push(check("type check", ["tsc", "--noEmit", "-p", "tsconfig.check.json"], "type check"));
  checks.push(
    check("lint (module boundaries)", ["eslint", "."], "lint").then(() =>
      check("format (prettier --check; `npx prettier --write .` fixes it)", ["prettier", "--check", "."], "format"),
    ),
  );
}
const e2eBuilt = wanted("e2e")
  ? runQuietly(
      "end-to-end build (next build, when the sources changed)",
      process.execPath,
      ["scripts/start.mjs", "--build-only"],
      {},
      "e2e build",
      join(results, "e2e-build.log"),
    )
  : Promise.resolve(false);
if (checks.length) {
  const started = Date.now();
  await Promise.all(checks);
  partTimes.push(["checks (type check, lint then format, beside the e2e build)", Date.now() - started]);
}

const projects = ["unit", "sqlite"].filter(wanted);
if (!wanted("postgres"));
else if (await postgresReachable()) projects.push("postgres");
else if (strict) {
  failedSuites.push("postgres (unreachable: skipped suites fail under CI)");
  totals.failed++;
} else
  console.warn("⚠ the PostgreSQL integration suite is SKIPPED (set TEST_POSTGRES_URL). Under CI this is a failure.");

// One vitest run per project, so that each part's time is its own.
function vitestRun(project, background) {
  const vitestJson = join(results, `vitest-${project}.json`);
  const vitestFlaky = join(results, `vitest-${project}-flaky.json`);
  rmSync(vitestJson, { force: true });
  rmSync(vitestFlaky, { force: true });
  const name = project === "unit" ? "unit" : `integration (${project})`;
  const args = [
    "run",
    "--project",
    project,
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${vitestJson}`,
    `--reporter=${join(root, "scripts/vitestFlakyReporter.mjs")}`,
  ];
  const env = { SVC_FLAKY_OUT: vitestFlaky };
  const collect = () => {
    if (existsSync(vitestFlaky)) flaky.push(...JSON.parse(readFileSync(vitestFlaky, "utf8")));
    if (existsSync(vitestJson)) {
      const v = JSON.parse(readFileSync(vitestJson, "utf8"));
      totals.passed += v.numPassedTests;
      totals.failed += v.numFailedTests;
      totals.skipped += v.numPendingTests + v.numTodoTests;
      failedTests.push(...vitestFailures(v));
    } else {
      failedSuites.push(`vitest (${project}) wrote no results`);
      totals.failed++;
    }
  };
  if (!background) {
    run(name, bin("vitest"), args, env, project);
    collect();
    return Promise.resolve();
  }
  return runQuietly(name, bin("vitest"), args, env, project, join(results, `vitest-${project}.log`)).then(collect);
}

if (projects.includes("unit")) await vitestRun("unit", false);
const integration = projects.filter((p) => p !== "unit");
const together = integration.length > 1 && process.env.SVC_TEST_SERIAL !== "1";
if (together) console.log(`\n▶ integration (${integration.join(" and ")} at the same time; output as each ends)`);
const integrationStarted = Date.now();
if (together) await Promise.all(integration.map((p) => vitestRun(p, true)));
else for (const p of integration) await vitestRun(p, false);
if (together) partTimes.push([`integration (${integration.join(" + ")} at once)`, Date.now() - integrationStarted]);

const e2eJson = join(results, "e2e.json");
rmSync(e2eJson, { force: true });
// The journeys against the server the build (started with the checks) serves.
if (wanted("e2e") && (await e2eBuilt)) run("end-to-end (Playwright)", bin("playwright"), ["test"], {}, "e2e journeys");
if (!wanted("e2e"));
else if (existsSync(e2eJson)) {
  const report = JSON.parse(readFileSync(e2eJson, "utf8"));
  const s = report.stats;
  totals.passed += s.expected + s.flaky;
  totals.failed += s.unexpected;
  totals.skipped += s.skipped;
  const named = flakySpecs(report.suites ?? []);
  flaky.push(
    ...named,
    ...Array.from({ length: Math.max(0, s.flaky - named.length) }, () => "e2e (a test Playwright counted as flaky)"),
  );
} else {
  failedSuites.push("playwright wrote no results (did its server start?)");
  totals.failed++;
}

if (strict && totals.skipped > 0) failedSuites.push(`${totals.skipped} skipped test(s) under CI`);
if (strict && flaky.length > 0) failedSuites.push(`${flaky.length} flaky test(s) under CI`);
if (totals.passed === 0) failedSuites.push("no test ran");
console.log("");
if (flaky.length) {
  console.log(
    `flaky: ${flaky.length} (passed only on a retry${strict ? "; a failure under CI" : "; under CI this is a failure"})`,
  );
  for (const name of flaky) console.log(`  ${name}`);
}
if (failedTests.length) {
  console.log(`failed tests: ${failedTests.length}`);
  for (const t of failedTests) console.log(t);
}
if (failedSuites.length) console.log(`failed: ${failedSuites.join("; ")}`);
console.log(
  `time: ${partTimes.map(([part, ms]) => `${part} ${(ms / 1000).toFixed(0)} s`).join(", ")}; total ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
);
console.log(`tests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(failedSuites.length ? 1 : 0);

/** vitest's JSON report: each failed test's file, name and the first lines of its message. */
function vitestFailures(report) {
  return (report.testResults ?? []).flatMap((file) =>
    file.status === "failed" && !(file.assertionResults ?? []).some((a) => a.status === "failed")
      ? [
          `  ✗ ${file.name.replace(root, "")}: ${String(file.message ?? "failed")
            .split("\n")
            .slice(0, 12)
            .join("\n      ")}`,
        ]
      : (file.assertionResults ?? [])
          .filter((a) => a.status === "failed")
          .map((a) => {
            const message = (a.failureMessages ?? []).join("\n").split("\n").slice(0, 12);
            return [`  ✗ ${file.name.replace(root, "")} > ${a.fullName}`, ...message.map((l) => `      ${l}`)].join(
              "\n",
            );
          }),
  );
}

/** Playwright's report: the specs whose test passed only on a retry. */
function flakySpecs(suites, path = []) {
  return suites.flatMap((suite) => [
    ...(suite.specs ?? []).flatMap((spec) =>
      (spec.tests ?? [])
        .filter((t) => t.status === "flaky")
        .map(
          (t) =>
            `e2e ${[...path, suite.title, spec.title].filter(Boolean).join(" > ")}${t.projectName ? ` [${t.projectName}]` : ""}`,
        ),
    ),
    ...flakySpecs(suite.suites ?? [], [...path, suite.title]),
  ]);
}
