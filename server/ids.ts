import { randomFillSync } from "node:crypto";
import { processWide } from "./processWide";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

/**
 * A new identifier `<prefix>_<26 chars>`: 48 bits of millisecond time then 80 random bits, in
 * Crockford base32, so ids sort by creation time (the same layout as a ULID).
 */
export function newId(prefix: string): string {
  let time = Date.now();
  let head = "";
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  const from = takeRandom(10);
  let tail = "";
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < 10; i++) {
    acc = (acc << 8) | pool.bytes[from + i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      tail += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return `${prefix}_${head}${tail}`;
}

/**
 * Random bytes drawn from a pool the CSPRNG fills 4 KiB at a time, as uuid does: a call into
 * crypto per id (two per governed call) cost ~4 % of a governed read's CPU. Each id's bytes are
 * used once.
 */
const POOL_BYTES = 4096;
// not state that differs between copies: any copy's bytes are as random as another's.
const pool = processWide("ids.randomPool", () => ({ bytes: new Uint8Array(POOL_BYTES), at: POOL_BYTES }));

/** Where `n` fresh random bytes start in `pool.bytes`. */
function takeRandom(n: number): number {
  if (pool.at + n > POOL_BYTES) {
    randomFillSync(pool.bytes);
    pool.at = 0;
  }
  pool.at += n;
  return pool.at - n;
}
