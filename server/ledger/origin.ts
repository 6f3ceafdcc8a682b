import { createPrivateKey, type KeyObject } from "node:crypto";
import type { JWK } from "jose";
import type { Database, Db } from "../db/client";
import { keyRing } from "../keys/signingKeys";
import { ledgerKeyRing, rotateLedgerKeyFile, type LedgerKeyRing } from "../keys/ledgerKeys";
import { appendServiceRecord } from "../provenance/appendServiceRecord";
import { requestHash } from "../provenance/record";
import { rootOrgDidOf } from "../setup/rootOrg";
import { keyHash, ED25519_TYPE, verifierKey } from "./note";
import { processWide } from "../processWide";

/**
 * The ledger's identity: its checkpoint origin (also the note key name) and the Ed25519 key that
 * signs its checkpoints. The origin is fixed at first use and stored, so restarts and a changed
 * public URL do not break the chain of checkpoints. The key is the ledger's own
 * (server/keys/ledgerKeys.ts), so rotating the token-signing keys leaves it alone.
 *
 * Every ledger key the deployment ever signed with is recorded, oldest first, in service_state
 * ("ledger_verifier_keys"). A process may sign only with the newest recorded key, or with a key
 * that follows it in its own ring (a rotation: it holds the previous key too). A rotation is
 * itself a provenance record naming the new verifier key, so it is covered by a checkpoint the
 * previous key signed: an auditor who trusts the old key learns the new one from the log.
 */
export interface LedgerIdentity {
  origin: string;
  publicKey: Buffer;
  privateKey: KeyObject;
  verifierKey: string;
  /** Every verifier key the ledger has signed with, oldest first (the last is `verifierKey`). */
  verifierKeys: string[];
}

const ORIGIN_KEY = "ledger_origin";
const KEYS_KEY = "ledger_verifier_keys";
const LEDGER_KEYS_LOCK = 0x5376_4c4b; // "SvLK"
export const LEDGER_KEY_ROTATE_OPERATION = "CLI ledger-key rotate";

// The tree builder asks every round: read the origin and import the key once per ledger key.
const cache = processWide("ledger.identities", () => new Map<string, Promise<LedgerIdentity>>());

export async function ledgerIdentity(db: Database): Promise<LedgerIdentity> {
  const origin = await ledgerOrigin(db);
  const ring = await ledgerKeyRing(() => keyToAdopt(db, origin));
  let identity = cache.get(ring.current.kid);
  if (!identity) {
    identity = loadIdentity(db, origin, ring);
    identity.catch(() => cache.delete(ring.current.kid));
    cache.set(ring.current.kid, identity);
  }
  return identity;
}

const publicKeyOf = (jwk: JWK) => Buffer.from(jwk.x as string, "base64url");

async function ledgerOrigin(db: Database): Promise<string> {
  const read = async () =>
    (await db.raw.query<{ value: string }>(`SELECT "value" FROM "service_state" WHERE "key" = $1`, [ORIGIN_KEY]))[0]
      ?.value;
  const stored = await read();
  if (stored) return stored;
  const rootDid = await rootOrgDidOf(db);
  const origin = process.env.SVC_LEDGER_ORIGIN || `svc.ledger/${(rootDid ?? "unknown").replace(/^did:svc:/, "")}`;
  await db.writeLock(() =>
    db.raw.execute(
      db.engine === "sqlite"
        ? `INSERT OR IGNORE INTO "service_state" ("key","value","updated_at") VALUES ($1, $2, $3)`
        : `INSERT INTO "service_state" ("key","value","updated_at") VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [ORIGIN_KEY, origin, new Date()],
    ),
  );
  return (await read())!;
}

async function recordedKeys(db: Database | Db): Promise<string[]> {
  const client = "read" in db ? db.read : db;
  const row = await client.serviceState.findUnique({ where: { key: KEYS_KEY } });
  return row ? (JSON.parse(row.value) as string[]) : [];
}

/**
 * The first ledger key of this process, when it has none yet. A deployment whose ledger already
 * has a key keeps it: the token-signing key that signed its checkpoints before the ledger had a
 * key of its own, or (another process's DATA_DIR) none at all, which is refused rather than
 * forked into a second key.
 */
async function keyToAdopt(db: Database, origin: string): Promise<JWK | undefined> {
  const { all: signingKeys } = await keyRing();
  const recorded = await recordedKeys(db);
  const byVerifierKey = (vkey: string) =>
    signingKeys.find((k) => verifierKey(origin, publicKeyOf(k.publicJwk)) === vkey)?.privateJwk;
  if (recorded.length > 0) {
    const adopted = byVerifierKey(recorded[recorded.length - 1]!);
    if (adopted) return adopted;
    throw new Error(
      `this process has no ledger key, and the ledger signs with ${recorded[recorded.length - 1]}: give every process the same SVC_LEDGER_KEYS (or DATA_DIR/keys/ledger-keys.json)`,
    );
  }
  const [latest] = await db.raw.query<{ note: string }>(
    `SELECT "note" FROM "ledger_checkpoint" ORDER BY "tree_size" DESC LIMIT 1`,
  );
  if (!latest) return undefined;
  return signingKeys.find((k) => signsNote(latest.note, origin, k.publicJwk))?.privateJwk;
}

function signsNote(note: string, origin: string, publicJwk: JWK): boolean {
  const hash = keyHash(origin, ED25519_TYPE, publicKeyOf(publicJwk));
  return note
    .split("\n")
    .filter((l) => l.startsWith(`— ${origin} `))
    .some((l) =>
      Buffer.from(l.slice(origin.length + 3), "base64")
        .subarray(0, 4)
        .equals(hash),
    );
}

async function loadIdentity(db: Database, origin: string, ring: LedgerKeyRing): Promise<LedgerIdentity> {
  const verifierKeys = await recordKeys(db, origin, ring);
  const publicKey = publicKeyOf(ring.current.publicJwk);
  return {
    origin,
    publicKey,
    privateKey: createPrivateKey({ key: ring.current.privateJwk as never, format: "jwk" }),
    verifierKey: verifierKey(origin, publicKey),
    verifierKeys,
  };
}

/**
 * Checks this process's ledger key against the recorded ones and records a rotation: the first
 * key is recorded as is; a key that follows the newest recorded one in this process's ring is a
 * rotation, recorded with a provenance record; anything else would fork the ledger's key.
 */
async function recordKeys(db: Database, origin: string, ring: LedgerKeyRing): Promise<string[]> {
  const mine = ring.all.map((k) => verifierKey(origin, publicKeyOf(k.publicJwk)));
  const current = mine[mine.length - 1]!;
  const known = await recordedKeys(db);
  if (known[known.length - 1] === current) return known;
  return db.writeTx(async (tx) => {
    if (db.engine === "postgresql") await tx.$queryRawUnsafe(`SELECT pg_advisory_xact_lock(${LEDGER_KEYS_LOCK})::text`);
    const recorded = await recordedKeys(tx);
    const newest = recorded[recorded.length - 1];
    if (newest === current) return recorded;
    if (newest !== undefined && !(mine.includes(newest) && !recorded.includes(current))) {
      throw new Error(
        `this process's ledger key ${current} is not the ledger's newest key ${newest}, nor a rotation of it: give every process the same SVC_LEDGER_KEYS (or DATA_DIR/keys/ledger-keys.json)`,
      );
    }
    const next = [...recorded, current];
    await tx.serviceState.upsert({
      where: { key: KEYS_KEY },
      create: { key: KEYS_KEY, value: JSON.stringify(next) },
      update: { value: JSON.stringify(next) },
    });
    if (newest !== undefined) {
      const rootDid = (await rootOrgDidOf(db)) ?? "unknown";
      await appendServiceRecord(tx, db.engine, {
        org_did: rootDid,
        grantor_did: rootDid,
        capability: "svc_api:*",
        operation: LEDGER_KEY_ROTATE_OPERATION,
        resource_type: "ledger_key",
        resource_id: current,
        decision: "allowed",
        status: 201,
        request_hash: requestHash({ previous: newest, verifier_key: current }),
      });
    }
    return next;
  });
}

/**
 * `npx svc ledger-key rotate`: a new ledger key, recorded (with a provenance record naming it)
 * before any checkpoint is signed with it. Processes sign with it from their next start on.
 */
export async function rotateLedgerKey(db: Database): Promise<{ previous: string; current: string }> {
  // The key in use is adopted and recorded first, so the rotation is recorded as following it.
  const previous = (await ledgerIdentity(db)).verifierKey;
  await rotateLedgerKeyFile();
  return { previous, current: (await ledgerIdentity(db)).verifierKey };
}
