import type { Database } from "../db/client";
import { rootOrgDidOf } from "../setup/rootOrg";
import { keyRing } from "../keys/signingKeys";
import { verifierKey } from "./note";

/**
 * The ledger's identity: its checkpoint origin (also the note key name) and the Ed25519 key that
 * signs its checkpoints (the service's current signing key). The origin is fixed at first use and
 * stored, so restarts and a changed public URL do not break the chain of checkpoints.
 */
export interface LedgerIdentity {
  origin: string;
  publicKey: Buffer;
  privateKey: import("node:crypto").KeyObject;
  verifierKey: string;
}

const ORIGIN_KEY = "ledger_origin";

// The tree builder asks every round: read the origin and import the key once per signing key.
const cache = new Map<string, Promise<LedgerIdentity>>();

export async function ledgerIdentity(db: Database): Promise<LedgerIdentity> {
  const { current } = await keyRing();
  let identity = cache.get(current.kid);
  if (!identity) {
    identity = loadIdentity(db);
    identity.catch(() => cache.delete(current.kid));
    cache.set(current.kid, identity);
  }
  return identity;
}

async function loadIdentity(db: Database): Promise<LedgerIdentity> {
  const { current } = await keyRing();
  const { createPrivateKey } = await import("node:crypto");
  const [row] = await db.raw.query<{ value: string }>(`SELECT "value" FROM "service_state" WHERE "key" = $1`, [ORIGIN_KEY]);
  let origin = row?.value;
  if (!origin) {
    const rootDid = await rootOrgDidOf(db);
    origin = process.env.SVC_LEDGER_ORIGIN || `svc.ledger/${(rootDid ?? "unknown").replace(/^did:svc:/, "")}`;
    await db.writeLock(() =>
      db.raw.execute(
        db.engine === "sqlite"
          ? `INSERT OR IGNORE INTO "service_state" ("key","value","updated_at") VALUES ($1, $2, $3)`
          : `INSERT INTO "service_state" ("key","value","updated_at") VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
        [ORIGIN_KEY, origin, new Date()],
      ),
    );
    origin = (await db.raw.query<{ value: string }>(`SELECT "value" FROM "service_state" WHERE "key" = $1`, [ORIGIN_KEY]))[0]!.value;
  }
  const publicKey = Buffer.from(current.publicJwk.x as string, "base64url");
  return { origin, publicKey, privateKey: createPrivateKey({ key: current.privateJwk as never, format: "jwk" }), verifierKey: verifierKey(origin, publicKey) };
}
