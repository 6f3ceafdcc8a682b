import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { config } from "../config";
import { closeDatabase, database } from "../db/client";
import { migrate } from "../db/migrate";
import { CAPABILITY_PATTERN } from "../identity/capabilities";
import { createApiKeyAsOperator } from "../identity/createApiKey";
import { rotateSigningKey } from "../keys/signingKeys";
import { complianceKey } from "../compliance/deploymentCompliance";
import { rotateLedgerKey } from "../ledger/origin";
import { bootstrap, setupLinkIfPending } from "../setup/bootstrap";
import { DATABASE_STATE_EXPLAINED, databaseState, describeDatabase } from "../setup/databaseState";
import { parseVerifierKey, type VerifierKey } from "../verifier/note";
import { expandRepeatedFlags } from "./args";
import { backupCommand, restoreCommand } from "./backup";
import { VerificationFailure, verifyExport, verifyRecordInclusion } from "../verifier/verifyExport";
import { logToStderr } from "../telemetry/log";

const readText = (path: string) => readFileSync(path, "utf8");

/** Each --key is a verifier key or a file holding one or more, one per line. */
function verifierKeys(values: string[]): VerifierKey[] {
  return values
    .flatMap((v) =>
      existsSync(v)
        ? readText(v)
            .split("\n")
            .filter((l) => l.trim() !== "")
        : [v],
    )
    .map(parseVerifierKey);
}

/** The offline verifier: needs only files and the public verifier key, never the database. */
async function verify(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args: expandRepeatedFlags(args),
    options: {
      export: { type: "string" },
      checkpoint: { type: "string", multiple: true },
      key: { type: "string", multiple: true },
      consistency: { type: "string", multiple: true },
      record: { type: "string" },
      proof: { type: "string" },
    },
    strict: true,
  });
  if (!values.key?.length) {
    console.error(
      "verify needs --key <verifier key> (GET /v1/provenance/verifier-key), or a file holding it; repeat it for every key the ledger signed with",
    );
    return 2;
  }
  try {
    const key = verifierKeys(values.key);
    if (values.record || values.proof) {
      if (!values.record || !values.proof) {
        console.error("verify --record needs --proof too");
        return 2;
      }
      const record = JSON.parse(readText(values.record)) as Record<string, unknown>;
      const { treeSize } = verifyRecordInclusion(record, JSON.parse(readText(values.proof)), key);
      console.log(
        `ok: record ${String(record.id)} (leaf ${String(record.seq)}) is included in the signed tree of ${treeSize} records`,
      );
      return 0;
    }
    if (!values.export) {
      console.error("verify needs --export <file> (with --checkpoint) or --record with --proof");
      return 2;
    }
    const notes = (values.checkpoint ?? []).map((file) => ({ file, text: readText(file) }));
    const consistency = (values.consistency ?? []).map(
      (f) => JSON.parse(readText(f)) as { from_size: number; to_size: number; consistency_path: string[] },
    );
    const started = Date.now();
    const report = await verifyExport(values.export, notes, key, consistency);
    for (const cp of report.checkpoints) console.log(`ok: checkpoint of ${cp.treeSize} records, root ${cp.root}`);
    console.log(
      `ok: ${report.records} records verified (${report.redacted} redacted to their leaf hash), ${report.checkpoints.length} checkpoint(s), ${consistency.length} consistency proof(s), in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return 0;
  } catch (e) {
    if (e instanceof VerificationFailure) {
      console.error(`FAIL: ${e.message}`);
      return 1;
    }
    console.error(`FAIL: ${(e as Error).message}`);
    return 1;
  }
}

const USAGE = `svc: the operator's command line

  npx svc migrate [--init]
      Apply the database migrations (also done at every start).
  npx svc keys create [--org <org_did>] [--capabilities <a,b,...>] [--name <n>] [--days <n>] [--json | --token-only] [--init]
      Mint an API key: a delegation of the organization (default: the root organization) to itself,
      with the given capabilities (default: svc_api:*), valid --days days (default 365).
  npx svc setup-link [--init]
      Print a new one-time console set-up link while the root organization has no administrator.
  npx svc signing-keys rotate
      Add a new token-signing key; it signs tokens from the next start on, older keys still verify.
      The ledger's checkpoint key is separate and does not change.
  npx svc ledger-key rotate
      Add a new ledger (checkpoint) key, recorded in the ledger; it signs checkpoints from the next
      start on. Verify older checkpoints with the older key: pass every --key.
  npx svc compliance-key
      Print the compliance report's HMAC key (hex), for an auditor checking a saved report.
  npx svc verify --export <file.ndjson> --checkpoint <note file>... --key <verifier key | file>... [--consistency <proof.json>...]
      Offline: recompute every record's leaf hash, rebuild the tree, check each checkpoint's signature
      (by any of the keys) and root, and any consistency proofs. Exits non-zero naming the first
      failing record or checkpoint. A flag may be repeated or followed by several values.
  npx svc verify --record <record.json> --proof <proof.json> --key <verifier key | file>...
      Offline: check one record's inclusion proof (GET /v1/provenance/{id}/proof) on its own.
  npx svc backup <file> [--force] [--pg-dump]
      SQLite: an online backup (one consistent snapshot, safe while the server runs and writes).
      PostgreSQL: prints the pg_dump command for the configured database and exits 4; --pg-dump runs it.
  npx svc restore <file> [--force] [--pg-restore]
      SQLite: refuses while any process has the database open, and to replace one without --force.
      PostgreSQL: prints the pg_restore command and exits 4; --pg-restore runs it (refused while
      another session uses the database). The keys (DATA_DIR/keys) are not in the backup.

Reads the same DATA_DIR / DATABASE_URL as the server (the server prints the exact command at
start) and says which database it uses. It never creates a database, nor a root organization,
unless given --init.`;

const REFUSED = 3;

/**
 * Says which database the command uses, and refuses one that no server set up, unless --init:
 * a CLI run with another DATA_DIR than the server's would otherwise create a second deployment
 * whose keys the server rejects.
 */
async function useDatabase(init: boolean | undefined, { needsRoot = true } = {}): Promise<number | undefined> {
  const where = describeDatabase();
  console.error(`svc: using ${where}`);
  const state = await databaseState();
  if (state === "ready" || init || (state === "no_root_organization" && !needsRoot)) return undefined;
  console.error(
    `svc: refusing to go on: the database ${where} ${DATABASE_STATE_EXPLAINED[state]}.\n` +
      `     If your server uses another database, run this command with the server's DATA_DIR / DATABASE_URL\n` +
      `     (the server prints the exact command when it starts). To set up a new deployment here, add --init.`,
  );
  return REFUSED;
}

async function main(argv: string[]): Promise<number> {
  const [command, sub] = argv;
  if (command === "verify") return verify(argv.slice(1));
  if (command === "backup") return backupCommand(argv.slice(1));
  if (command === "restore") return restoreCommand(argv.slice(1));
  if (command === "migrate") {
    const { values } = parseArgs({ args: argv.slice(1), options: { init: { type: "boolean" } }, strict: true });
    const refused = await useDatabase(values.init, { needsRoot: false });
    if (refused) return refused;
    const applied = await migrate((l) => console.log(l));
    console.log(
      applied.length
        ? `${applied.length} migration(s) applied (${config().engine}).`
        : `The database is up to date (${config().engine}).`,
    );
    return 0;
  }
  if (command === "keys" && sub === "create") {
    const { values } = parseArgs({
      args: argv.slice(2),
      options: {
        org: { type: "string" },
        capabilities: { type: "string" },
        name: { type: "string" },
        days: { type: "string" },
        json: { type: "boolean" },
        "token-only": { type: "boolean" },
        init: { type: "boolean" },
      },
      strict: true,
    });
    const capabilities = (values.capabilities ?? "svc_api:*")
      .split(",")
      .map((c) => c.trim())
      .filter(Boolean);
    const bad = capabilities.filter((c) => !CAPABILITY_PATTERN.test(c));
    if (bad.length || capabilities.length === 0) {
      console.error(`Not a capability: ${bad.join(", ") || "(none given)"}`);
      return 2;
    }
    const days = Number(values.days ?? "365");
    if (!Number.isInteger(days) || days < 1 || days > 3650) {
      console.error("--days must be a whole number from 1 to 3650");
      return 2;
    }
    const refused = await useDatabase(values.init);
    if (refused) return refused;
    const { rootOrgDid } = await bootstrap();
    // The catalogue offers what the composition root's areas check (loaded here only: other commands stay quick).
    (await import("../areas")).composeServer();
    const key = await createApiKeyAsOperator(await database(), {
      orgDid: values.org ?? rootOrgDid,
      capabilities,
      name: values.name ?? null,
      durationSeconds: days * 86_400,
    });
    if (values.json) console.log(JSON.stringify(key));
    else if (values["token-only"]) console.log(key.token);
    else {
      console.log(`API key ${key.delegation_id} for ${key.org_did}`);
      console.log(`capabilities: ${key.capabilities.join(", ")}`);
      console.log(`expires:      ${key.expires_at}`);
      console.log(`\n${key.token}\n\nShown once. Use it as: Authorization: Bearer <token>`);
    }
    return 0;
  }
  if (command === "setup-link") {
    const { values } = parseArgs({ args: argv.slice(1), options: { init: { type: "boolean" } }, strict: true });
    const refused = await useDatabase(values.init);
    if (refused) return refused;
    const { rootOrgDid } = await bootstrap();
    const link = await setupLinkIfPending(rootOrgDid, { fresh: true });
    console.log(
      link
        ? `Open this one-time link (valid 24 h) to register the first administrator's passkey:\n${link}`
        : "Set-up is done: the root organization has an administrator. Invite people from the console.",
    );
    return 0;
  }
  if (command === "signing-keys" && sub === "rotate") {
    const refused = await useDatabase(false);
    if (refused) return refused;
    const kid = await rotateSigningKey();
    console.log(
      `New token-signing key ${kid}. Restart the service to sign tokens with it; tokens signed by older keys stay valid. The ledger's checkpoint key is unchanged.`,
    );
    return 0;
  }
  if (command === "ledger-key" && sub === "rotate") {
    const refused = await useDatabase(false);
    if (refused) return refused;
    await bootstrap();
    const { previous, current } = await rotateLedgerKey(await database());
    console.log(
      `New ledger key, recorded in the ledger (operation "CLI ledger-key rotate"):\n${current}\nIt signs checkpoints once the service restarts. Checkpoints signed before verify with the previous key:\n${previous}\nPublish the new key beside the old one; verify across the rotation with both (--key old --key new).`,
    );
    return 0;
  }
  if (command === "compliance-key") {
    const refused = await useDatabase(false);
    if (refused) return refused;
    console.log((await complianceKey()).toString("hex"));
    return 0;
  }
  console.error(USAGE);
  return command === undefined || command === "help" || command === "--help" ? 0 : 2;
}

// Its stdout is the command's answer (a key, JSON): whatever the services log goes to stderr.
logToStderr();
main(process.argv.slice(2))
  .then(async (code) => {
    await closeDatabase();
    process.exit(code);
  })
  .catch(async (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    await closeDatabase().catch(() => undefined);
    process.exit(1);
  });
