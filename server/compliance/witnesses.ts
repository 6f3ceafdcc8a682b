import type { Database } from "../db/client";
import { newId } from "../ids";
import { consistencyProof, latestCheckpoint } from "../ledger/proofs";
import { ed25519Verify, parseCheckpoint, parseVerifierKey, type VerifierKey } from "../verifier/note";

/**
 * External witnesses (C2SP tlog-witness): each new checkpoint is sent to every configured witness
 * with a consistency proof from the size it last cosigned; the witness checks it and returns a
 * cosignature (C2SP tlog-cosignature), which is verified and stored. SVC_WITNESSES lists them as
 * `<witness verifier key>@<url>`, comma-separated.
 */
export interface Witness {
  name: string;
  url: string;
  key: VerifierKey;
}

export function configuredWitnesses(): Witness[] {
  const raw = process.env.SVC_WITNESSES?.trim();
  if (!raw) return [];
  return raw.split(",").map((entry) => {
    const at = entry.lastIndexOf("@");
    if (at < 0) throw new Error(`SVC_WITNESSES entry ${JSON.stringify(entry)} is not <verifier key>@<url>`);
    const key = parseVerifierKey(entry.slice(0, at));
    if (key.type !== 0x04) throw new Error(`witness key ${key.name} is not a cosignature (type 0x04) key`);
    return { name: key.name, url: entry.slice(at + 1).replace(/\/$/, ""), key };
  });
}

/** Checks a cosignature line on a checkpoint's text; returns its timestamp (Unix seconds). */
export function verifyCosignature(line: string, checkpointText: string, witness: Witness): number | undefined {
  const m = /^— (\S+) ([A-Za-z0-9+/=]+)$/.exec(line.trim());
  if (!m || m[1] !== witness.name) return undefined;
  const blob = Buffer.from(m[2]!, "base64");
  if (blob.length !== 4 + 8 + 64 || !blob.subarray(0, 4).equals(witness.key.keyHash)) return undefined;
  const timestamp = blob.readBigUInt64BE(4);
  // A cosignature from the future would count as fresh for ever.
  if (Number(timestamp) > Date.now() / 1000 + 300) return undefined;
  const message = Buffer.from(`cosignature/v1\ntime ${timestamp}\n${checkpointText}`, "utf8");
  return ed25519Verify(witness.key.publicKey, message, blob.subarray(12)) ? Number(timestamp) : undefined;
}

async function lastCosignedSize(db: Database, witness: string): Promise<number> {
  const { _max } = await db.read.ledgerCosignature.aggregate({ where: { witness }, _max: { treeSize: true } });
  return Number(_max.treeSize ?? 0);
}

async function submit(
  db: Database,
  witness: Witness,
  note: string,
  oldSize: number,
  treeSize: number,
): Promise<Response> {
  const proof =
    oldSize > 0 && oldSize < treeSize ? (await consistencyProof(db, oldSize, treeSize)).consistency_path : [];
  const body = `old ${oldSize}\n${proof.map((p) => `${p}\n`).join("")}\n${note}`;
  return fetch(`${witness.url}/add-checkpoint`, {
    method: "POST",
    body,
    headers: { "Content-Type": "text/plain" },
    redirect: "error",
    signal: AbortSignal.timeout(10_000),
  });
}

/** A witness's answer, read up to 64 KiB (cosignature lines are short). */
async function boundedText(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > 65_536) {
      await reader.cancel();
      throw new Error("witness response too large");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Sends the latest checkpoint to every witness that has not cosigned it; returns how many cosigned. */
export async function witnessLatestCheckpoint(db: Database): Promise<number> {
  const witnesses = configuredWitnesses();
  if (witnesses.length === 0) return 0;
  const latest = await latestCheckpoint(db);
  if (!latest) return 0;
  const text = parseCheckpoint(latest.note).text;
  let cosigned = 0;
  for (const witness of witnesses) {
    let oldSize = await lastCosignedSize(db, witness.name);
    if (oldSize >= latest.treeSize) continue;
    try {
      let res = await submit(db, witness, latest.note, oldSize, latest.treeSize);
      if (res.status === 409) {
        // The witness knows another size of this log: prove consistency from that one.
        const known = Number((await boundedText(res)).trim());
        if (!Number.isInteger(known) || known > latest.treeSize) continue;
        oldSize = known;
        res = await submit(db, witness, latest.note, oldSize, latest.treeSize);
      }
      if (!res.ok) continue;
      const lines = (await boundedText(res)).split("\n").filter((l) => l.startsWith("— "));
      for (const line of lines) {
        const signedAt = verifyCosignature(line, text, witness);
        if (signedAt === undefined) continue;
        // A cosignature already stored for this size (another process got there first) is kept.
        await db.writeTx((tx) =>
          tx.ledgerCosignature.upsert({
            where: { treeSize_witness: { treeSize: BigInt(latest.treeSize), witness: witness.name } },
            create: {
              id: newId("cos"),
              treeSize: BigInt(latest.treeSize),
              witness: witness.name,
              line,
              signedAt: BigInt(signedAt),
              createdAt: new Date(),
            },
            update: {},
          }),
        );
        cosigned++;
        break;
      }
    } catch {
      // An unreachable witness is reported by the walled-garden status, not thrown here.
    }
  }
  return cosigned;
}

/** The latest stored cosignature of each configured witness. */
export async function latestCosignatures(
  db: Database,
): Promise<{ witness: Witness; cosignature: { tree_size: number; signed_at: string; line: string } | null }[]> {
  const out = [];
  for (const witness of configuredWitnesses()) {
    const row = await db.read.ledgerCosignature.findFirst({
      where: { witness: witness.name },
      orderBy: { treeSize: "desc" },
      select: { treeSize: true, signedAt: true, line: true },
    });
    out.push({
      witness,
      cosignature: row
        ? {
            tree_size: Number(row.treeSize),
            signed_at: new Date(Number(row.signedAt) * 1000).toISOString(),
            line: row.line,
          }
        : null,
    });
  }
  return out;
}
