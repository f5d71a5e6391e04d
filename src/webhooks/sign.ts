import { createHmac, randomBytes } from "node:crypto";

/**
 * Standard Webhooks 1.0 signing (https://www.standardwebhooks.com): the signed content is
 * `<webhook-id>.<webhook-timestamp>.<body>`, the key is the base64 part of `whsec_...`, and the
 * header lists one `v1,<base64 HMAC-SHA256>` per active secret, separated by spaces.
 */
const SECRET_PREFIX = "whsec_";

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

function keyOf(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

/** The base64 HMAC-SHA256 of `id.timestamp.body` under `secret`. */
export function signWebhook(secret: string, messageId: string, timestampSec: number, body: string): string {
  return createHmac("sha256", keyOf(secret)).update(`${messageId}.${timestampSec}.${body}`).digest("base64");
}

/** The three Standard Webhooks headers for one attempt, signed with every secret given. */
export function webhookHeaders(
  secrets: string[],
  messageId: string,
  timestampSec: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampSec),
    "webhook-signature": secrets
      .map((secret) => `v1,${signWebhook(secret, messageId, timestampSec, body)}`)
      .join(" "),
  };
}
