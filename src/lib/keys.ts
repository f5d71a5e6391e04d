import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * API keys: `opk_` + 30 base62 random chars + 6 base62 chars of the CRC32 of the random part.
 * The checksum lets a scanner (or this server) reject a typo without touching the database.
 */
export const KEY_PREFIX = "opk_";
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const RANDOM_LEN = 30;
const CHECKSUM_LEN = 6;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE) of an ASCII string (key material is base62, so one byte per character). */
export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Fixed-width base62 of a 32-bit number (6 chars hold 62^6 > 2^32). */
function base62Fixed(value: number, width: number): string {
  let out = "";
  let v = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  // Rejection sampling keeps every character uniformly likely.
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export interface GeneratedKey {
  key: string;
  prefix: string;
  hash: string;
}

/** Makes a new key; only `hash` and `prefix` are ever stored. */
export function generateApiKey(): GeneratedKey {
  const random = randomBase62(RANDOM_LEN);
  const key = `${KEY_PREFIX}${random}${base62Fixed(crc32(random), CHECKSUM_LEN)}`;
  return { key, prefix: random.slice(0, 8), hash: hashApiKey(key) };
}

const KEY_RE = /^opk_[0-9A-Za-z]{36}$/;

/** Format and checksum check, offline. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_RE.test(key)) return false;
  const random = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LEN);
  const checksum = key.slice(KEY_PREFIX.length + RANDOM_LEN);
  return base62Fixed(crc32(random), CHECKSUM_LEN) === checksum;
}

/** SHA-256 hex of the whole key. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Constant-time equality of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}
