import { mkdtemp } from "node:fs/promises";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { exited, spawnChild, runIfChild } from "./lib/child";
import { ownCpuMs, recordFigure } from "./lib/figures";
import { percentile } from "./lib/load";
import { machineLoad, mib } from "./lib/machine";
import { createDatabase, PG_ADMIN_URL, postgresAnswers, redact } from "./lib/postgres";

/**
 * usage (issue 31, least privilege), on SQLite and PostgreSQL, each in a child process: a key holding 8 capabilities
 * and 3 delegations derived from it, with 1,000,000 provenance records over 30 days (a fifth under
 * the derived ones, 4 capabilities used, 2 % refused), inserted with raw multi-row INSERTs (the
 * usage rollup's trigger summing them as they go). Measured:
 *
 * 1. `GET /v1/delegations/{id}/usage`'s service (`getDelegationUsage`) over them. Target ≤ 200 ms.
 * 2. `POST /v1/delegations/{id}/simulate`'s (`simulateNarrowing`), dropping one used capability.
 * 3. What the trigger costs an append: 100,000 more records inserted with it, then without it.
 *
 * `npm run bench -- usage`; BENCH_USAGE_RECORDS sets the number of records (default 1,000,000),
 * BENCH_USAGE_ENGINES the engines (default `sqlite,postgresql`).
 */
const SELF = fileURLToPath(import.meta.url);
const RECORDS = Number(process.env.BENCH_USAGE_RECORDS || 1_000_000);
const EXTRA = 100_000;

export async function usage(): Promise<void> {
  const engines = (process.env.BENCH_USAGE_ENGINES || "sqlite,postgresql").split(",").map((e) => e.trim());
  for (const engine of engines) {
    console.log(`\nusage (${engine}): a key's usage and a simulation over ${RECORDS.toLocaleString("en-US")} records…`);
    if (engine !== "postgresql") {
      const code = await exited(spawnChild(SELF, ["--child"]));
      if (code !== 0) throw new Error(`the usage bench failed (exit ${code})`);
      continue;
    }
    if (!(await postgresAnswers())) {
      console.log(`  skipped, nobody answers at ${redact(PG_ADMIN_URL)}`);
      continue;
    }
    const pgDb = await createDatabase();
    try {
      const code = await exited(spawnChild(SELF, ["--child"], { ...process.env, DATABASE_URL: pgDb.url }));
      if (code !== 0) throw new Error(`the usage bench failed on PostgreSQL (exit ${code})`);
    } finally {
      await pgDb.drop();
    }
  }
}

const log = (line: string) => console.log(`  ${line}`);

async function child(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "svc-bench-usage-"));
  try {
    process.env.DATA_DIR = dataDir;
    process.env.DATABASE_URL ||= `file:${join(dataDir, "svc.db")}`;
    process.env.SVC_IN_PROCESS_WORKER = "0";
    const { bootstrap, rootOrgDid } = await import("../server/setup/bootstrap");
    const { database, closeDatabase } = await import("../server/db/client");
    const { createApiKeyAsOperator } = await import("../server/identity/createApiKey");
    const { getDelegationUsage } = await import("../server/identity/getDelegationUsage");
    const { simulateNarrowing } = await import("../server/identity/simulateNarrowing");
    await bootstrap();
    (await import("../server/areas")).composeServer();
    const db = await database();
    const orgDid = (await rootOrgDid(db))!;
    const HELD = [
      "svc_api:passports:read",
      "svc_api:agents:read",
      "svc_api:agents:invoke",
      "svc_api:executions:read",
      "svc_api:delegations:read",
      "svc_api:delegations:write",
      "svc_api:events:read",
      "svc_api:events:write",
    ];
    const USED = HELD.slice(0, 4);
    const key = await createApiKeyAsOperator(db, { orgDid, capabilities: HELD, durationSeconds: 86_400 });
    const children = [1, 2, 3].map((i) => `${key.delegation_id.slice(0, -1)}${i}`);
    await db.writeTx(async (tx) => {
      for (const id of children)
        await tx.delegation.create({
          data: {
            id,
            orgDid,
            kind: "session",
            grantorDid: orgDid,
            delegateDid: orgDid,
            parentId: key.delegation_id,
            ancestry: key.delegation_id,
            capabilities: USED,
            expiresAt: new Date(Date.now() + 86_400_000),
          },
        });
    });
    const principal = { orgDid, actorDid: orgDid } as Parameters<typeof getDelegationUsage>[1];

    const [last] = await db.raw.query<{ seq: number | null }>(`SELECT MAX("seq") AS "seq" FROM "provenance_record"`);
    let next = Number(last?.seq ?? -1) + 1;
    const now = Date.now();
    const lit = (s: string) => `'${s}'`;
    const insert = async (count: number, delegationOf: (i: number) => string) => {
      const BATCH = 500;
      const PER_TX = 50_000;
      for (let start = 0; start < count; start += PER_TX) {
        await db.raw.transaction(async (q) => {
          for (let b = start; b < Math.min(start + PER_TX, count); b += BATCH) {
            const values: string[] = [];
            for (let i = b; i < Math.min(b + BATCH, count); i++) {
              const s = next++;
              const capability = USED[i % USED.length]!;
              const refused = i % 50 === 0;
              const iso = new Date(now - ((i * 104729) % (30 * 86_400_000))).toISOString();
              const at = db.engine === "sqlite" ? iso.replace("Z", "+00:00") : iso.slice(0, -1);
              values.push(
                `(${lit(`prv_bench${s.toString(36).padStart(12, "0")}`)}, ${s}, ${lit(at)}, ${lit(orgDid)}, ${lit(orgDid)}, ${lit(delegationOf(i))}, ${lit(orgDid)}, ${lit(capability)}, 'GET /v1/bench', 'bench', NULL, ${refused ? "'denied', 403" : "'allowed', 200"}, 'h', 'req_bench', 'l')`,
              );
            }
            await q.execute(
              `INSERT INTO "provenance_record" ("id", "seq", "timestamp", "org_did", "actor_did", "delegation_id", "grantor_did", "capability", "operation", "resource_type", "resource_id", "decision", "status", "request_hash", "request_id", "leaf_hash") VALUES ${values.join(", ")}`,
            );
          }
        });
      }
    };
    const delegationOf = (i: number) => (i % 5 === 0 ? children[i % 3]! : key.delegation_id);
    const t0 = performance.now();
    await insert(RECORDS, delegationOf);
    log(`inserted ${RECORDS.toLocaleString("en-US")} records in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await db.raw.execute("ANALYZE");
    log(`engine ${db.engine}`);
    const rollupRows = await db.raw.query<{ n: number }>(`SELECT COUNT(*) AS "n" FROM "delegation_usage_rollup"`);
    log(`rollup: ${rollupRows[0]!.n} rows`);

    // ── 1. usage ──
    const runs: number[] = [];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < 6; i++) {
      const t = performance.now();
      const u = await getDelegationUsage(db.read, principal, key.delegation_id);
      if (i > 0) runs.push(performance.now() - t);
      const calls = u.capabilities.filter((c) => HELD.includes(c.capability)).reduce((n, c) => n + c.calls, 0);
      const refused = u.capabilities.reduce((n, c) => n + c.refused, 0);
      if (calls + refused < RECORDS * 0.9 || u.unused.length !== HELD.length - USED.length)
        throw new Error(`usage counted ${calls} + ${refused} of ${RECORDS} records, unused ${u.unused.join(", ")}`);
    }
    const cpuUsage = ownCpuMs(cpu0) / 6;
    runs.sort((a, b) => a - b);
    const median = percentile(runs, 50);
    log(
      `usage over ${RECORDS.toLocaleString("en-US")} records (the key and 3 derived delegations): median ${median.toFixed(1)} ms, best ${runs[0]!.toFixed(1)} ms, worst ${runs[runs.length - 1]!.toFixed(1)} ms (target ≤ 200 ms); CPU ${cpuUsage.toFixed(1)} ms per read`,
    );
    recordFigure({
      row: `delegation usage, ${RECORDS.toLocaleString("en-US")} records, ${db.engine}`,
      value: median,
      unit: "ms",
      target: "≤ 200 ms",
      met: median <= 200,
      cpuMsPerOp: cpuUsage,
      cpuOf: "one process",
    });

    // ── 2. simulate ──
    const sims: number[] = [];
    let refuse = 0;
    for (let i = 0; i < 6; i++) {
      const t = performance.now();
      const s = await simulateNarrowing(db.read, principal, key.delegation_id, { capabilities: USED.slice(1) });
      if (i > 0) sims.push(performance.now() - t);
      refuse = s.would_refuse;
      if (s.examples.length !== 20) throw new Error("the simulation gave no examples");
    }
    sims.sort((a, b) => a - b);
    log(
      `simulate (one of 4 used capabilities dropped: ${refuse.toLocaleString("en-US")} calls would be refused): median ${percentile(sims, 50).toFixed(1)} ms`,
    );

    // ── 3. the trigger's cost per append ──
    const other = `${key.delegation_id.slice(0, -1)}9`;
    let t = performance.now();
    await insert(EXTRA, () => other);
    const withTrigger = (performance.now() - t) / EXTRA;
    const [trigger] =
      db.engine === "sqlite"
        ? await db.raw.query<{ sql: string }>(
            `SELECT "sql" FROM "sqlite_master" WHERE "type" = 'trigger' AND "name" = 'provenance_record_usage_rollup'`,
          )
        : [];
    if (db.engine === "sqlite") await db.raw.execute(`DROP TRIGGER "provenance_record_usage_rollup"`);
    else await db.raw.execute(`ALTER TABLE "provenance_record" DISABLE TRIGGER "provenance_record_usage_rollup"`);
    t = performance.now();
    await insert(EXTRA, () => other);
    const without = (performance.now() - t) / EXTRA;
    if (db.engine === "sqlite") await db.raw.execute(trigger!.sql);
    else await db.raw.execute(`ALTER TABLE "provenance_record" ENABLE TRIGGER "provenance_record_usage_rollup"`);
    log(
      `append, raw multi-row INSERTs: ${(withTrigger * 1000).toFixed(1)} µs per record with the rollup's trigger, ${(without * 1000).toFixed(1)} µs without`,
    );
    log(`RSS ${mib(process.memoryUsage().rss)}; ${machineLoad()}`);
    await closeDatabase();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runIfChild(SELF, "usage", child);
