import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { database } from "@/server/db/client";
import { catchUp } from "@/server/ledger/buildTree";
import { call } from "./harness";

/**
 * Brings the ledger's tree up to date, then checks with `svc verify` that the export, checkpoint
 * and verifier key served at `base` verify (the files go to a new temporary directory `tmpPrefix…`).
 */
export async function expectLedgerVerifies(base: string, token: string, tmpPrefix: string): Promise<void> {
  await catchUp(await database());
  const dir = mkdtempSync(join(tmpdir(), tmpPrefix));
  const get = async (path: string) => (await call(base, "GET", path, { token })).body as string;
  writeFileSync(join(dir, "key.txt"), await get("/v1/provenance/verifier-key"));
  writeFileSync(join(dir, "cp.txt"), await get("/v1/provenance/checkpoint"));
  writeFileSync(join(dir, "export.ndjson"), await get("/v1/provenance/export"));
  const verified = await promisify(execFile)(process.execPath, [
    join(process.cwd(), "bin/svc.mjs"),
    "verify",
    "--export",
    join(dir, "export.ndjson"),
    "--checkpoint",
    join(dir, "cp.txt"),
    "--key",
    join(dir, "key.txt"),
  ]);
  expect(verified.stdout).toMatch(/ok: \d+ records verified/);
}
