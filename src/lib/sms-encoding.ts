/**
 * SMS encoding detection and segment counting (3GPP TS 23.038). A body made only of GSM-7
 * characters is sent as GSM-7 (160 septets in one segment, 153 per part when concatenated; the
 * extension characters take two septets); anything else forces UCS-2 (70 UTF-16 units, 67 per part).
 */

export type SmsEncoding = "GSM-7" | "UCS-2";

const GSM7_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const GSM7_EXTENSION = "\f^{}\\[~]|€";

const basic = new Set(GSM7_BASIC);
const extension = new Set(GSM7_EXTENSION);

export interface SmsShape {
  encoding: SmsEncoding;
  segments: number;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) the body takes. */
  units: number;
}

/** Detects the encoding a body needs and how many SMS segments it is billed as. */
export function smsShape(body: string): SmsShape {
  let septets = 0;
  for (const ch of body) {
    if (basic.has(ch)) septets += 1;
    else if (extension.has(ch)) septets += 2;
    else {
      const units = body.length;
      return { encoding: "UCS-2", units, segments: units <= 70 ? 1 : Math.ceil(units / 67) };
    }
  }
  return { encoding: "GSM-7", units: septets, segments: septets <= 160 ? 1 : Math.ceil(septets / 153) };
}
