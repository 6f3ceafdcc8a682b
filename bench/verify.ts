import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { createWriteStream, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkpointBody, signNote, verifierKey } from "../server/ledger/note";
import { sealRecord } from "../server/provenance/record";
import { CompactRange } from "../server/verifier/compactRange";
import { recordFigure } from "./lib/figures";
import { machineLoad } from "./lib/machine";

/**
 * verify: `svc verify --export` of a synthetic export of BENCH_VERIFY_N records (1,000,000 unless
 * told; records shaped as the ledger writes them, with a signed checkpoint at the end), run from
 * the compiled CLI on one thread (SVC_VERIFY_THREADS=0) and on one worker thread per core. Wall
 * time, the process's CPU (every thread) and that CPU per record less the CLI's start-up; the
 * target is 10 M records in 60 s on 2 cores (BENCH_VERIFY_N=10000000 measures it rather than
 * scaling, with 6.3 GB of export). The export is kept in the temporary directory between runs.
 * `npm run bench -- verify`.
 */
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const bin = join(root, "bin/svc.mjs");

async function makeExport(n: number): Promise<{ file: string; note: string; key: string }> {
  const dir = join(tmpdir(), `svc-bench-verify-${n}`);
  const file = join(dir, "export.ndjson");
  if (existsSync(join(dir, "key"))) {
    const { readFileSync } = await import("node:fs");
    return { file, note: join(dir, "checkpoint"), key: readFileSync(join(dir, "key"), "utf8") };
  }
  mkdirSync(dir, { recursive: true });
  const out = createWriteStream(file + ".tmp");
  const builder = new CompactRange();
  const t0 = Date.parse("2026-11-01T00:00:00Z");
  for (let seq = 0; seq < n; seq++) {
    const r = sealRecord(
      {
        org_did: "did:web:svc.example:org:bench",
        actor_did: `did:web:svc.example:agent:${seq % 97}`,
        delegation_id: `dlg_${(seq % 13).toString(36).padStart(24, "0")}`,
        grantor_did: "did:web:svc.example:user:owner",
        capability: "svc_api:executions:create",
        operation: "executions.create",
        resource_type: "execution",
        resource_id: `exe_${seq.toString(36).padStart(24, "0")}`,
        decision: seq % 50 === 0 ? "denied" : "allowed",
        status: seq % 50 === 0 ? 403 : 201,
        request_hash: "9f".repeat(32),
        request_id: `req_${seq.toString(36).padStart(20, "0")}`,
      },
      `prv_${seq.toString(36).padStart(24, "0")}`,
      seq,
      new Date(t0 + seq * 10),
    );
    builder.push(Buffer.from(r.leaf_hash, "base64"));
    if (!out.write(JSON.stringify(r) + "\n")) await new Promise<void>((res) => out.once("drain", () => res()));
  }
  await new Promise<void>((res, rej) => out.end((e?: Error) => (e ? rej(e) : res())));
  renameSync(file + ".tmp", file);
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(12);
  const name = "svc.example/bench";
  writeFileSync(join(dir, "checkpoint"), signNote(checkpointBody(name, n, builder.root()), name, privateKey, raw));
  const key = verifierKey(name, raw);
  writeFileSync(join(dir, "key"), key);
  return { file, note: join(dir, "checkpoint"), key };
}

/** `svc verify --export` of an export, from the compiled CLI: wall time and the CPU of the whole process (every thread). */
function timeVerify(made: { file: string; note: string; key: string }, threads: string): { wall: number; cpu: number } {
  const wrapper = `process.on("exit", () => { const u = process.cpuUsage(); require("node:fs").writeSync(2, "\\ncpu:" + (u.user + u.system) / 1e6 + "\\n"); }); process.argv.splice(1, 0, ${JSON.stringify(bin)}); import(${JSON.stringify(bin)});`;
  const started = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    ["-e", wrapper, "--", "verify", "--export", made.file, "--checkpoint", made.note, "--key", made.key],
    { env: { ...process.env, SVC_VERIFY_THREADS: threads }, encoding: "utf8", timeout: 900_000 },
  );
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0) throw new Error(`svc verify failed: ${r.stderr}${r.stdout}`);
  return { wall, cpu: Number(/cpu:([\d.]+)/.exec(r.stderr)![1]) };
}

export async function verify(): Promise<void> {
  const n = Number(process.env.BENCH_VERIFY_N ?? 1_000_000);
  const made = Date.now();
  const exported = await makeExport(n);
  console.log(`\nverify: export of ${n} records ready in ${((Date.now() - made) / 1000).toFixed(1)} s`);
  // The CLI's start-up (loading its bundle), measured on an export of one record, is left out of
  // the CPU per record.
  const startup = timeVerify(await makeExport(1), "0").cpu;
  const threads = String(Math.min(availableParallelism(), 8));
  const one = timeVerify(exported, "0");
  const many = timeVerify(exported, threads);
  const perRecordUs = (cpu: number) => ((cpu - startup) * 1e6) / n;
  const per10M = (many.wall * 10_000_000) / n;
  console.log(
    `verify: ${n} records: ${one.wall.toFixed(1)} s wall on one thread (${one.cpu.toFixed(1)} s CPU, ${perRecordUs(one.cpu).toFixed(2)} µs per record), ` +
      `${many.wall.toFixed(1)} s on ${threads} worker threads (${many.cpu.toFixed(1)} s CPU, ${perRecordUs(many.cpu).toFixed(2)} µs per record, ${(one.wall / many.wall).toFixed(2)}×); ` +
      `start-up ${startup.toFixed(2)} s CPU; 10 M records ≈ ${per10M.toFixed(1)} s (target 60 s; ${machineLoad()})`,
  );
  recordFigure({
    row: "svc verify of a 10 M-record export, 2 cores",
    value: per10M,
    unit: n === 10_000_000 ? "s" : `s (from ${n.toLocaleString("en-US")} records)`,
    target: "≤ 60 s on 2 cores",
    met: per10M <= 60,
    cpuMsPerOp: perRecordUs(many.cpu) / 1000,
    cpuOf: `svc verify per record, ${threads} worker threads, start-up left out`,
    note: `inline ${perRecordUs(one.cpu).toFixed(2)} µs of CPU per record, on ${threads} worker threads ${perRecordUs(many.cpu).toFixed(2)} µs`,
  });
}
