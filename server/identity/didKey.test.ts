import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { didKeyFromJwk, jwkFromDidKey, normalizePublicJwk } from "./didKey";

describe("did:key", () => {
  it("decodes the did:key specification's Ed25519 and P-256 examples and encodes them back", () => {
    for (const did of [
      "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
      "did:key:zDnaerDaTF5BXEavCrfRZEk316dpbLsfPDZ3WJ5hRTPFU2169",
    ]) {
      expect(didKeyFromJwk(jwkFromDidKey(did))).toBe(did);
    }
    expect(jwkFromDidKey("did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp")).toEqual({
      kty: "OKP",
      crv: "Ed25519",
      x: "O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik",
    });
  });

  it("round-trips fresh keys", () => {
    for (const pair of [generateKeyPairSync("ed25519"), generateKeyPairSync("ec", { namedCurve: "P-256" })]) {
      const jwk = normalizePublicJwk(pair.publicKey.export({ format: "jwk" }) as never);
      expect(jwkFromDidKey(didKeyFromJwk(jwk))).toEqual(jwk);
    }
  });

  it("refuses private keys, other curves and malformed strings", () => {
    const priv = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
    expect(() => normalizePublicJwk(priv as never)).toThrow(/private/);
    const secp = generateKeyPairSync("ec", { namedCurve: "secp256k1" }).publicKey.export({ format: "jwk" });
    expect(() => normalizePublicJwk(secp as never)).toThrow();
    for (const bad of ["did:key:abc", "did:key:z0OIl", "did:key:z6Mk", "zzzz"])
      expect(() => jwkFromDidKey(bad), bad).toThrow();
  });
});
