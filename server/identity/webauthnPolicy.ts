/**
 * What the console's WebAuthn registration accepts: the single source for the registration code
 * and for the compliance report. Human passports exist only through a verified registration with
 * user verification; the credential's private key never leaves the person's device.
 */
export const ATTESTATION_FORMATS_ACCEPTED = ["packed", "tpm", "android-key", "apple", "fido-u2f", "none"] as const;
export const USER_VERIFICATION_REQUIRED = true;
