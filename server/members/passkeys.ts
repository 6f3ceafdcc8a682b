import { createHash, randomBytes } from "node:crypto";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { decodeCredentialPublicKey } from "@simplewebauthn/server/helpers";
import { config } from "../config";
import type { Database, Db } from "../db/client";
import type { Invite } from "../db/generated/sqlite/client";
import { PasskeyRefused } from "../errors";
import { didKeyFromJwk, normalizePublicJwk } from "../identity/didKey";
import { ATTESTATION_FORMATS_ACCEPTED, USER_VERIFICATION_REQUIRED } from "../identity/webauthnPolicy";
import { newId } from "../ids";
import type { Role } from "./roles";

/**
 * Passkeys for people (WebAuthn via @simplewebauthn/server). The credential is created on the
 * person's device; their human passport is the did:key of its public key, so the service never
 * generates or sees a human's private key. User verification is required, challenges are
 * single-use and expire, and signature counters must move forward.
 */
const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** ES256 (P-256) and EdDSA (Ed25519): the key types a did:key passport can carry. */
const ALGORITHMS = [-7, -8];

export function relyingParty() {
  const origin = config().publicUrl;
  return { rpID: new URL(origin).hostname, origin, rpName: "svc" };
}

const refused = PasskeyRefused;

export const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex");

/** The invite (or set-up link) behind a token, if it can still be redeemed. */
export async function redeemableInvite(db: Database, token: string) {
  const invite = await db.read.invite.findUnique({ where: { tokenHash: tokenHash(token) } });
  if (!invite) throw refused("This link is not valid.", 404, "invite_invalid");
  await assertRedeemable(db.read, invite);
  return invite;
}

/**
 * A link works once, before it expires, while whoever made it is still an active administrator,
 * and (for the set-up link) only while the organization has no administrator yet.
 */
async function assertRedeemable(db: Db, invite: Invite): Promise<void> {
  if (invite.usedAt)
    throw refused("This link has already been used. Ask an administrator for a new one.", 410, "invite_used");
  // Checked before the expiry: completing set-up ends every other set-up link at once, and saying
  // "expired" would send a person who only needs to sign in to ask for a new link.
  if (invite.kind === "setup") {
    const admins = await db.member.count({ where: { orgDid: invite.orgDid, role: "admin", status: "active" } });
    if (admins > 0)
      throw refused(
        "This set-up link was superseded: set-up was completed with another link. Sign in with your passkey, or ask an administrator for an invitation.",
        410,
        "invite_superseded",
      );
  }
  if (invite.expiresAt.getTime() <= Date.now())
    throw refused("This link has expired. Ask an administrator for a new one.", 410, "invite_expired");
  if (invite.kind !== "setup" && invite.createdBy) {
    const creator = await db.member.findUnique({ where: { passportDid: invite.createdBy } });
    if (!creator || creator.status !== "active" || creator.role !== "admin")
      throw refused(
        "Whoever made this link no longer has access. Ask an administrator for a new one.",
        410,
        "invite_expired",
      );
  }
}

async function storeChallenge(
  db: Database,
  challenge: string,
  purpose: "register" | "authenticate",
  subject?: unknown,
) {
  const id = newId("chl");
  await db.writeTx((tx) =>
    tx.webAuthnChallenge.create({
      data: {
        id,
        challenge,
        purpose,
        subject: subject === undefined ? null : JSON.stringify(subject),
        expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS),
      },
    }),
  );
  return id;
}

/** Takes a challenge once: a second use (a replayed response) finds it spent. */
async function takeChallenge(db: Database, id: string, purpose: "register" | "authenticate") {
  return db.writeTx(async (tx) => {
    const row = await tx.webAuthnChallenge.findUnique({ where: { id } });
    if (!row || row.purpose !== purpose) throw refused("Unknown challenge: start again.");
    if (row.usedAt)
      throw refused("This challenge was already used: a response can only be used once.", 400, "challenge_reused");
    if (row.expiresAt.getTime() <= Date.now())
      throw refused("The challenge expired: start again.", 400, "challenge_expired");
    // Conditional, so that two concurrent uses cannot both take it (PostgreSQL runs READ COMMITTED).
    const taken = await tx.webAuthnChallenge.updateMany({ where: { id, usedAt: null }, data: { usedAt: new Date() } });
    if (taken.count !== 1)
      throw refused("This challenge was already used: a response can only be used once.", 400, "challenge_reused");
    return row;
  });
}

export async function registrationOptions(db: Database, token: string, displayName: string) {
  const invite = await redeemableInvite(db, token);
  const { rpID, rpName } = relyingParty();
  const options = await generateRegistrationOptions({
    rpName,
    rpID,
    userName: displayName,
    userDisplayName: displayName,
    userID: randomBytes(32),
    attestationType: "none",
    authenticatorSelection: {
      residentKey: "required",
      userVerification: USER_VERIFICATION_REQUIRED ? "required" : "preferred",
    },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  const challengeId = await storeChallenge(db, options.challenge, "register", { inviteId: invite.id, displayName });
  return { challengeId, options };
}

/** COSE public key → public JWK (P-256 or Ed25519). */
function coseToJwk(cose: Uint8Array) {
  const key = decodeCredentialPublicKey(new Uint8Array(cose)) as unknown as Map<number, unknown>;
  const b64 = (v: unknown) => Buffer.from(v as Uint8Array).toString("base64url");
  if (key.get(1) === 2 && key.get(-1) === 1)
    return normalizePublicJwk({ kty: "EC", crv: "P-256", x: b64(key.get(-2)), y: b64(key.get(-3)) });
  if (key.get(1) === 1 && key.get(-1) === 6)
    return normalizePublicJwk({ kty: "OKP", crv: "Ed25519", x: b64(key.get(-2)) });
  throw refused("Only P-256 (ES256) and Ed25519 passkeys are accepted.");
}

/**
 * Verifies a registration and creates the person: their human passport (did:key of the passkey),
 * their membership with the invite's role, and the credential. The invite is spent.
 */
export async function completeRegistration(db: Database, challengeId: string, response: RegistrationResponseJSON) {
  const challenge = await takeChallenge(db, challengeId, "register");
  const subject = JSON.parse(challenge.subject ?? "{}") as { inviteId: string; displayName: string };
  const { rpID, origin } = relyingParty();
  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: USER_VERIFICATION_REQUIRED,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch (e) {
    throw refused(`The passkey registration could not be verified: ${(e as Error).message}`);
  }
  if (!verification.verified) throw refused("The passkey registration could not be verified.");
  const info = verification.registrationInfo;
  if (!(ATTESTATION_FORMATS_ACCEPTED as readonly string[]).includes(info.fmt))
    throw refused(`Attestation format ${info.fmt} is not accepted.`);
  const jwk = coseToJwk(info.credential.publicKey);
  const did = didKeyFromJwk(jwk);
  return db.writeTx(async (tx) => {
    const invite = await tx.invite.findUnique({ where: { id: subject.inviteId } });
    if (!invite) throw refused("The link was used or expired meanwhile.", 410, "invite_used");
    await assertRedeemable(tx, invite);
    const spent = await tx.invite.updateMany({
      where: { id: invite.id, usedAt: null },
      data: { usedAt: new Date(), usedBy: did },
    });
    if (spent.count !== 1) throw refused("This link has already been used.", 410, "invite_used");
    if (invite.kind === "setup") {
      // Set-up is done: every other set-up link dies with it.
      await tx.invite.updateMany({ where: { kind: "setup", usedAt: null }, data: { expiresAt: new Date() } });
    }
    await tx.passport.create({
      data: { did, type: "human", name: subject.displayName, orgDid: invite.orgDid, publicKeyJwk: jwk as object },
    });
    await tx.member.create({
      data: {
        passportDid: did,
        orgDid: invite.orgDid,
        role: invite.role as Role,
        displayName: subject.displayName,
        invitedBy: invite.createdBy,
      },
    });
    await tx.webAuthnCredential.create({
      data: {
        id: info.credential.id,
        passportDid: did,
        publicKey: Buffer.from(info.credential.publicKey),
        counter: BigInt(info.credential.counter),
        transports: info.credential.transports?.join(",") ?? null,
      },
    });
    return { did, orgDid: invite.orgDid, role: invite.role as Role, displayName: subject.displayName };
  });
}

export async function authenticationOptions(db: Database) {
  const { rpID } = relyingParty();
  const options = await generateAuthenticationOptions({
    rpID,
    userVerification: USER_VERIFICATION_REQUIRED ? "required" : "preferred",
    allowCredentials: [],
  });
  return { challengeId: await storeChallenge(db, options.challenge, "authenticate"), options };
}

/** Verifies a sign-in assertion: single-use challenge, right origin, user verified, counter moving forward, active member. */
export async function verifyAssertion(db: Database, challengeId: string, response: AuthenticationResponseJSON) {
  const challenge = await takeChallenge(db, challengeId, "authenticate");
  const credential = await db.read.webAuthnCredential.findUnique({ where: { id: response.id } });
  if (!credential) throw refused("This passkey is not registered here.", 401);
  const { rpID, origin } = relyingParty();
  let verification;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: USER_VERIFICATION_REQUIRED,
      credential: {
        id: credential.id,
        publicKey: new Uint8Array(credential.publicKey),
        counter: Number(credential.counter),
      },
    });
  } catch (e) {
    throw refused(`The passkey sign-in could not be verified: ${(e as Error).message}`, 401);
  }
  if (!verification.verified) throw refused("The passkey sign-in could not be verified.", 401);
  const next = verification.authenticationInfo.newCounter;
  // A counter that does not move forward (when the authenticator keeps one) suggests a cloned key.
  if (Number(credential.counter) > 0 && next <= Number(credential.counter))
    throw refused("The passkey's signature counter went backwards: it may have been cloned.", 401, "counter_replayed");
  const member = await db.read.member.findUnique({ where: { passportDid: credential.passportDid } });
  if (!member || member.status !== "active")
    throw refused("This person's access has been revoked.", 403, "member_revoked");
  // Conditional: of two concurrent uses of one assertion, only one moves the counter and signs in.
  const moved = await db.writeTx((tx) =>
    tx.webAuthnCredential.updateMany({
      where: { id: credential.id, counter: credential.counter },
      data: { counter: BigInt(next), lastUsedAt: new Date() },
    }),
  );
  if (moved.count !== 1) throw refused("This passkey was used concurrently; sign in again.", 401, "counter_replayed");
  return member;
}
