import type { JWK } from "jose";
import type { z } from "zod";
import type { Db } from "../db/client";
import { Conflict } from "../errors";
import type { Principal } from "../governance/principal";
import { didKeyFromJwk, jwkFromDidKey, normalizePublicJwk } from "./didKey";
import type { CreatePassportRequest } from "./schemas";
import { passportView } from "./views";

/**
 * Registers an agent or organization passport from a public key. The passport's DID is the
 * did:key of that key, so the same key cannot be registered twice. The service never sees the
 * private key: a JWK carrying `d` is refused.
 */
export async function registerPassport(db: Db, principal: Principal, input: z.output<typeof CreatePassportRequest>) {
  const jwk =
    typeof input.public_key === "string"
      ? jwkFromDidKey(input.public_key)
      : normalizePublicJwk(input.public_key as JWK);
  const did = didKeyFromJwk(jwk);
  const existing = await db.passport.findUnique({ where: { did }, select: { did: true } });
  if (existing) throw Conflict(`A passport for this public key is already registered.`);
  const row = await db.passport.create({
    data: {
      did,
      type: input.type,
      name: input.name,
      description: input.description ?? null,
      orgDid: principal.orgDid,
      publicKeyJwk: jwk as object,
    },
  });
  return passportView(row);
}
