import { createHash, generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { encodeCBOR } from "@levischuck/tiny-cbor";

/**
 * A software WebAuthn authenticator (a test peer, as the browser's virtual authenticator is in
 * the e2e suite): makes a P-256 credential and signs registration and assertion responses exactly
 * as a device does, with knobs to misbehave (wrong origin, no user verification, stale counter).
 */
const b64u = (b: Uint8Array | string) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

export function softAuthenticator(rpId = "localhost") {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const credentialId = randomBytes(16);
  let counter = 0;
  const cose = encodeCBOR(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(jwk.x!, "base64url")],
      [-3, Buffer.from(jwk.y!, "base64url")],
    ]),
  );
  const flags = (uv: boolean, attested: boolean) => 0x01 | (uv ? 0x04 : 0) | (attested ? 0x40 : 0);
  const counterBytes = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };

  return {
    credentialId: b64u(credentialId),
    register(challenge: string, opts: { origin?: string; uv?: boolean } = {}) {
      const clientData = JSON.stringify({
        type: "webauthn.create",
        challenge,
        origin: opts.origin ?? "http://localhost:3000",
        crossOrigin: false,
      });
      const idLen = Buffer.alloc(2);
      idLen.writeUInt16BE(credentialId.length);
      const authData = Buffer.concat([
        sha256(rpId),
        Buffer.of(flags(opts.uv ?? true, true)),
        counterBytes(0),
        Buffer.alloc(16),
        idLen,
        credentialId,
        Buffer.from(cose),
      ]);
      const attestationObject = encodeCBOR(
        new Map<string, unknown>([
          ["fmt", "none"],
          ["attStmt", new Map()],
          ["authData", authData],
        ]) as never,
      );
      return {
        id: b64u(credentialId),
        rawId: b64u(credentialId),
        type: "public-key",
        response: {
          clientDataJSON: b64u(clientData),
          attestationObject: b64u(attestationObject),
          transports: ["internal"],
        },
        clientExtensionResults: {},
        authenticatorAttachment: "platform",
      };
    },
    assert(challenge: string, opts: { origin?: string; uv?: boolean; counter?: number } = {}) {
      counter = opts.counter ?? counter + 1;
      const clientData = JSON.stringify({
        type: "webauthn.get",
        challenge,
        origin: opts.origin ?? "http://localhost:3000",
        crossOrigin: false,
      });
      const authData = Buffer.concat([sha256(rpId), Buffer.of(flags(opts.uv ?? true, false)), counterBytes(counter)]);
      const signature = sign("sha256", Buffer.concat([authData, sha256(clientData)]), privateKey);
      return {
        id: b64u(credentialId),
        rawId: b64u(credentialId),
        type: "public-key",
        response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature) },
        clientExtensionResults: {},
      };
    },
  };
}
