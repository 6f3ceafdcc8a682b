import type { JWK } from "jose";
import {
  appendKey,
  keyFileExists,
  keysFromEnv,
  newKeyEntry,
  readOrCreateKeyFile,
  toSigningKey,
  type KeyEntry,
  type SigningKey,
} from "./keyFile";
import { processWide } from "../processWide";

/**
 * The ledger's checkpoint keys, apart from the token-signing keys: rotating the keys that sign
 * tokens must not change the key an auditor pinned to verify checkpoints. Kept in
 * DATA_DIR/keys/ledger-keys.json (mode 0600) or given by SVC_LEDGER_KEYS (a JSON array of private
 * Ed25519 JWKs). The newest signs; rotating is deliberate (`npx svc ledger-key rotate`) and is
 * recorded in the ledger itself (server/ledger/origin.ts).
 */
export interface LedgerKeyRing {
  current: SigningKey;
  all: SigningKey[];
}

export const LEDGER_KEY_FILE = "ledger-keys.json";

const held = processWide("keys.ledgerKeyRing", () => ({ ring: undefined as Promise<LedgerKeyRing> | undefined }));

/**
 * The ledger's key ring. `firstKey` is asked only when no key exists yet, so a deployment that
 * signed checkpoints with a token-signing key before the two were separated keeps that key.
 */
export function ledgerKeyRing(
  firstKey: () => Promise<JWK | undefined> = async () => undefined,
): Promise<LedgerKeyRing> {
  if (!held.ring) {
    const loading = load(firstKey);
    held.ring = loading;
    // A refused first key (another process's ledger) is asked again at the next call, not cached.
    loading.catch(() => held.ring === loading && (held.ring = undefined));
  }
  return held.ring;
}

export function resetLedgerKeyRing(): void {
  held.ring = undefined;
}

/** Whether the ledger's keys come from the environment rather than the key file. */
export const ledgerKeysFromEnv = () => Boolean(process.env.SVC_LEDGER_KEYS);

/** Whether this process already has a ledger key (in the environment or its key file). */
export const ledgerKeyExists = () => ledgerKeysFromEnv() || keyFileExists(LEDGER_KEY_FILE);

async function load(firstKey: () => Promise<JWK | undefined>): Promise<LedgerKeyRing> {
  const entries: KeyEntry[] = ledgerKeysFromEnv()
    ? await keysFromEnv("SVC_LEDGER_KEYS")
    : await readOrCreateKeyFile(LEDGER_KEY_FILE, async () => newKeyEntry(await firstKey()));
  const all = await Promise.all(entries.map(toSigningKey));
  return { current: all[all.length - 1]!, all };
}

/** Adds a new ledger key to the key file: it signs this process's checkpoints from its next start on. */
export async function rotateLedgerKeyFile(): Promise<string> {
  if (ledgerKeysFromEnv())
    throw new Error("The ledger's keys come from SVC_LEDGER_KEYS: add the new key there (last), and restart.");
  const entry = await appendKey(LEDGER_KEY_FILE);
  resetLedgerKeyRing();
  return entry.kid;
}
