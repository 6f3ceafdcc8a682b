import { generateKeyPairSync, sign } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { COSIGNATURE_TYPE, keyHash, verifierKey } from "@/server/ledger/note";
import { verifyCheckpoint, type VerifierKey } from "@/server/verifier/note";
import { verifyConsistency } from "@/server/verifier/proofs";

/**
 * A C2SP tlog-witness on loopback, as a test peer: it accepts a checkpoint only when it is
 * signed by the log's key and consistent with the last one it cosigned, and answers with a
 * tlog-cosignature line.
 */
export async function startFakeWitness(
  logKey: VerifierKey,
  name = "witness.test",
  initial?: { size: number; root: Buffer },
) {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const pub = Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url");
  const state = { size: initial?.size ?? 0, root: initial?.root ?? Buffer.alloc(0), requests: 0 };
  const server = createServer(async (req, res) => {
    state.requests++;
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.method !== "POST" || req.url !== "/add-checkpoint") return void res.writeHead(404).end();
    const split = body.indexOf("\n\n");
    const head = body.slice(0, split).split("\n");
    const note = body.slice(split + 2);
    const old = Number(/^old (\d+)$/.exec(head[0] ?? "")?.[1] ?? NaN);
    const proof = head.slice(1).map((l) => Buffer.from(l, "base64"));
    let cp;
    try {
      cp = verifyCheckpoint(note, logKey);
    } catch {
      return void res.writeHead(403).end("bad signature");
    }
    if (old !== state.size)
      return void res.writeHead(409, { "Content-Type": "text/x.tlog.size" }).end(`${state.size}\n`);
    if (old > 0 && !verifyConsistency(old, cp.treeSize, state.root, cp.rootHash, proof))
      return void res.writeHead(422).end("inconsistent");
    state.size = cp.treeSize;
    state.root = cp.rootHash;
    const ts = BigInt(Math.floor(Date.now() / 1000));
    const tsBytes = Buffer.alloc(8);
    tsBytes.writeBigUInt64BE(ts);
    const signature = sign(null, Buffer.from(`cosignature/v1\ntime ${ts}\n${cp.text}`), privateKey);
    res
      .writeHead(200, { "Content-Type": "text/plain" })
      .end(
        `— ${name} ${Buffer.concat([keyHash(name, COSIGNATURE_TYPE, pub), tsBytes, signature]).toString("base64")}\n`,
      );
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    name,
    state,
    config: `${verifierKey(name, pub, COSIGNATURE_TYPE)}@${url}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
