import { describe, expect, it } from "bun:test";
import { parsePhoneNumberFromString } from "libphonenumber-js";
import { normalizePhone } from "../src/lib/phone";

/** What libphonenumber itself answers for an input (default region US, possible length). */
function parsed(input: string): string | null {
  const number = parsePhoneNumberFromString(input, "US");
  return number?.isPossible() ? number.number : null;
}

describe("normalizePhone", () => {
  it("answers what libphonenumber answers for +1 and ten digits, whatever the digits", () => {
    const inputs = ["+10000000000", "+11111111111", "+15555550100", "+19999999999", "+12125550100"];
    // Every three-digit prefix, including those a NANP area code cannot start with (0, 1).
    for (let area = 0; area < 1000; area++)
      for (const rest of ["0000000", "1234567", "5550100", "9999999"])
        inputs.push(`+1${String(area).padStart(3, "0")}${rest}`);
    let seed = 7;
    for (let i = 0; i < 5000; i++) {
      seed = (seed * 48271) % 2147483647;
      inputs.push(`+1${String(seed % 10_000_000_000).padStart(10, "0")}`);
    }
    const differing = inputs.filter((input) => normalizePhone(input) !== parsed(input));
    expect(differing).toEqual([]);
  });

  it("still parses everything else", () => {
    expect(normalizePhone("(212) 555-0100")).toBe("+12125550100");
    expect(normalizePhone(" +1 212 555 0100 ")).toBe("+12125550100");
    expect(normalizePhone("+1212555010")).toBeNull(); // nine digits
    expect(normalizePhone("+121255501000")).toBeNull(); // eleven digits
    expect(normalizePhone("+442071838750")).toBe("+442071838750");
    expect(normalizePhone("tel:+12125550100")).toBe("+12125550100");
    expect(normalizePhone("+1212555010a")).toBeNull();
  });
});
