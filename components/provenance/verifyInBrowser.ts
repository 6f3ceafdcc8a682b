import canonicalize from "canonicalize";

/**
 * Checks an inclusion proof in the browser with WebCrypto alone: the record's leaf hash from its
 * RFC 8785 canonical JSON, the RFC 9162 §2.1.3.2 path to the root, and the checkpoint's Ed25519
 * signature under the ledger's verifier key. Nothing here trusts the server's own verdict.
 */
const enc = new TextEncoder();
const b64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
const sha256 = async (bytes: Uint8Array) =>
  new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
const node = (l: Uint8Array, r: Uint8Array) => sha256(concat(Uint8Array.of(1), l, r));
const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

export interface BrowserVerification {
  leafMatches: boolean;
  pathLeadsToRoot: boolean;
  signatureValid: boolean;
  /** Whether the signing key is the one this browser pinned the first time it verified (trust on first use). */
  keyPinned: "first-use" | "matches" | "changed";
  keyFingerprint: string;
  treeSize: number;
}

const PIN = "svc.ledger.verifier-key";

/** Trust on first use: the first verifier key this browser sees is remembered; a different one later is flagged. */
function pin(key: string): "first-use" | "matches" | "changed" {
  const known = globalThis.localStorage?.getItem(PIN);
  if (!known) {
    globalThis.localStorage?.setItem(PIN, key);
    return "first-use";
  }
  return known === key ? "matches" : "changed";
}

export async function verifyInBrowser(
  record: Record<string, unknown>,
  proof: {
    leaf_index: number;
    tree_size: number;
    leaf_hash: string;
    inclusion_path: string[];
    checkpoint: string;
    verifier_key: string;
  },
): Promise<BrowserVerification> {
  const { leaf_hash, ...rest } = record;
  const leaf = await sha256(concat(Uint8Array.of(0), enc.encode(canonicalize(rest)!)));
  // The leaf must be this record's, at this record's index.
  const leafMatches =
    equal(leaf, b64(leaf_hash as string)) && equal(leaf, b64(proof.leaf_hash)) && record.seq === proof.leaf_index;

  const split = proof.checkpoint.lastIndexOf("\n\n");
  const text = proof.checkpoint.slice(0, split + 1);
  const [, sizeLine, rootLine] = text.split("\n");
  const root = b64(rootLine ?? "");
  let fn = proof.leaf_index;
  let sn = proof.tree_size - 1;
  let r = leaf;
  let ok = Number.isInteger(fn) && fn >= 0 && Number(sizeLine) === proof.tree_size && fn < proof.tree_size;
  for (const p of proof.inclusion_path.map(b64)) {
    if (sn === 0) {
      ok = false;
      break;
    }
    if (fn % 2 === 1 || fn === sn) {
      r = await node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else r = await node(r, p);
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  const pathLeadsToRoot = ok && sn === 0 && equal(r, root);

  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/=]+)$/.exec(proof.verifier_key.trim());
  let signatureValid = false;
  const origin = text.split("\n")[0];
  if (m && origin === m[1]) {
    const raw = b64(m[3]!);
    // The key hash binds name, algorithm (0x01: Ed25519) and key: SHA-256(name ‖ "\n" ‖ raw)[:4].
    const hash = (await sha256(concat(enc.encode(`${m[1]}\n`), raw))).slice(0, 4);
    const hex = Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
    const line = proof.checkpoint
      .slice(split + 2)
      .split("\n")
      .find((l) => l.startsWith(`— ${m[1]} `));
    if (raw[0] === 0x01 && hex === m[2] && line) {
      const blob = b64(line.split(" ")[2]!);
      const key = await crypto.subtle.importKey("raw", raw.slice(1) as BufferSource, { name: "Ed25519" }, false, [
        "verify",
      ]);
      signatureValid =
        equal(blob.slice(0, 4), hash) &&
        (await crypto.subtle.verify(
          { name: "Ed25519" },
          key,
          blob.slice(4) as BufferSource,
          enc.encode(text) as BufferSource,
        ));
    }
  }
  return {
    leafMatches,
    pathLeadsToRoot,
    signatureValid,
    keyPinned: pin(proof.verifier_key.trim()),
    keyFingerprint: m?.[2] ?? "",
    treeSize: proof.tree_size,
  };
}
