import { hash } from "node:crypto";
import { errors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { config } from "../config";
import { Unauthenticated } from "../errors";
import { keyRing } from "./signingKeys";

/** The JOSE `typ` of a delegation token (RFC 8725 explicit typing). */
export const TOKEN_TYPE = "dlg+jwt";

export interface DelegationClaims {
  /** Delegation id. */
  jti: string;
  /** The actor holding the delegation (a passport or organization DID). */
  sub: string;
  /** The organization the delegation belongs to. */
  org: string;
  exp: number;
}

/** Signs a delegation's bearer token with the service's current key. */
export async function signDelegationToken(claims: {
  delegationId: string;
  subject: string;
  orgDid: string;
  capabilities: string[];
  expiresAt: Date;
  environment?: string | null;
}): Promise<string> {
  const { current } = await keyRing();
  const cfg = config();
  return new SignJWT({
    org: claims.orgDid,
    cap: claims.capabilities,
    ...(claims.environment ? { env: claims.environment } : {}),
  })
    .setProtectedHeader({ alg: "EdDSA", typ: TOKEN_TYPE, kid: current.kid })
    .setIssuer(cfg.issuer)
    .setAudience(cfg.audience)
    .setSubject(claims.subject)
    .setJti(claims.delegationId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(claims.expiresAt.getTime() / 1000))
    .sign(current.privateKey);
}

/** SHA-256 of a bearer token: the key its verified grant is cached under (identity/authenticate.ts), on every call. */
export function tokenHash(token: string): string {
  // The one-shot hash: half the CPU of createHash's object for a token this size.
  return hash("sha256", token, "base64url");
}

/**
 * Verifies a bearer token: EdDSA only, the `kid` looked up among the service's own keys and
 * nowhere else, `typ`, `iss`, `aud` and `exp` checked. Throws a 401 naming what failed.
 */
export async function verifyDelegationToken(token: string): Promise<DelegationClaims> {
  const ring = await keyRing();
  const cfg = config();
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(
      token,
      (header) => {
        const key = header.kid ? ring.byKid.get(header.kid) : undefined;
        if (!key) throw new errors.JWKSNoMatchingKey();
        return key.publicKey;
      },
      {
        algorithms: ["EdDSA"],
        typ: TOKEN_TYPE,
        issuer: cfg.issuer,
        audience: cfg.audience,
        requiredClaims: ["exp", "jti", "sub"],
        clockTolerance: 2,
      },
    ));
  } catch (e) {
    throw Unauthenticated(describeJoseError(e));
  }
  if (typeof payload.org !== "string") throw Unauthenticated("The token does not name its organization.");
  return { jti: payload.jti!, sub: payload.sub!, org: payload.org, exp: payload.exp! };
}

function describeJoseError(e: unknown): string {
  if (e instanceof errors.JWTExpired) return "The token has expired.";
  if (e instanceof errors.JWTClaimValidationFailed)
    return `The token's ${e.claim} claim is not valid for this service.`;
  if (e instanceof errors.JWKSNoMatchingKey) return "The token was not signed by one of this service's keys.";
  if (e instanceof errors.JOSEAlgNotAllowed) return "The token's signing algorithm is not accepted (EdDSA only).";
  if (e instanceof errors.JWSSignatureVerificationFailed) return "The token's signature is not valid.";
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid) return "The token is malformed.";
  return "The token is not valid.";
}
