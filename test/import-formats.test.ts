// POST /v1/contacts/import with the exports users bring (API.md §7.1): Shopify, Klaviyo, Mailchimp and
// HubSpot files with their published column headers (test/fixtures/imports/), consent, phone and state.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "./support/server";

type Json = Record<string, unknown>;
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

const fixture = (name: string) => readFileSync(join(import.meta.dir, "fixtures/imports", name), "utf8");
const csv = async (text: string, key: string) =>
  await s.api("POST", "/v1/contacts/import", undefined, {
    key,
    raw: text,
    headers: { "content-type": "text/csv" },
  });
async function contactsOf(key: string): Promise<Map<string, Json>> {
  const list = (await s.api("GET", "/v1/contacts?limit=100", undefined, { key })).body.contacts as Json[];
  return new Map(list.map((c) => [c.phone_number as string, c]));
}
const picked = (c: Json | undefined): Json | undefined =>
  c && { opted_in: c.opted_in, state: c.state, timezone: c.timezone, timezone_source: c.timezone_source };

// [format, file, the answer, contacts by phone: what the import made of them]
const FORMATS: [string, string, Json, Record<string, Json | undefined>][] = [
  [
    "Shopify customers export",
    "shopify-customers.csv",
    {
      created: 3,
      consent_column: "Accepts SMS Marketing",
      errors: [{ row: 5, error: "Accepts SMS Marketing must be yes or no" }],
    },
    {
      "+18505550101": {
        opted_in: true,
        state: "FL",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      // Only a Default Address Phone; Accepts SMS Marketing: no.
      "+18505550102": {
        opted_in: false,
        state: "FL",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      "+14015550103": {
        opted_in: true,
        state: "RI",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      "+15125550104": undefined,
    },
  ],
  [
    "Klaviyo profiles export",
    "klaviyo-profiles.csv",
    { created: 3, consent_column: "SMS Marketing Consent", errors: [] },
    {
      "+18505550201": {
        opted_in: true,
        state: "FL",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      "+14015550202": {
        opted_in: false,
        state: "RI",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      "+12125550203": {
        opted_in: false,
        state: "NY",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
    },
  ],
  [
    "Mailchimp audience export",
    "mailchimp-audience.csv",
    { created: 3, consent_column: "SMS Subscription Status", errors: [] },
    {
      "+18505550301": {
        opted_in: true,
        state: "FL",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      // TIMEZONE given: the contact's own zone.
      "+14015550302": {
        opted_in: false,
        state: "RI",
        timezone: "America/New_York",
        timezone_source: "given",
      },
      "+12125550303": {
        opted_in: false,
        state: "NY",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
    },
  ],
  [
    "HubSpot contacts export",
    "hubspot-contacts.csv",
    { created: 3, consent_column: "SMS Opt In", errors: [] },
    {
      "+18505550401": {
        opted_in: true,
        state: "FL",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      // Only a Mobile Phone Number; State/Region written out in full.
      "+14015550402": {
        opted_in: false,
        state: "RI",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
      // An empty consent cell in a file with a consent column: no consent recorded.
      "+12125550403": {
        opted_in: false,
        state: "NY",
        timezone: "America/New_York",
        timezone_source: "area_code",
      },
    },
  ],
];

describe("POST /v1/contacts/import (exports of other tools)", () => {
  for (const [format, file, answer, expected] of FORMATS) {
    it(`imports a ${format} as it is: consent, phone and state columns`, async () => {
      const ws = await s.newWorkspace();
      const r = await csv(fixture(file), ws.key);
      expect({ format, status: r.status, ...r.body }).toMatchObject({
        format,
        status: 200,
        ok: true,
        ...answer,
      });
      const made = await contactsOf(ws.key);
      const got = Object.fromEntries(Object.keys(expected).map((phone) => [phone, picked(made.get(phone))]));
      expect({ format, contacts: got }).toEqual({ format, contacts: expected });
    });
  }

  it("keeps what a file says beyond the contact's columns in fields (Shopify: Tags, Total Spent)", async () => {
    const ws = await s.newWorkspace();
    await csv(fixture("shopify-customers.csv"), ws.key);
    const ada = (await contactsOf(ws.key)).get("+18505550101") as Json;
    expect(ada).toMatchObject({ first_name: "Ada", email: "ada@example.com" });
    expect(ada.fields).toMatchObject({
      Tags: "vip",
      "Total Spent": "120.50",
      "Default Address City": "Pensacola",
    });
  });

  it("answers consent_column: null and imports everyone opted in when the file has no consent column", async () => {
    const ws = await s.newWorkspace();
    const r = await csv("phone,first_name\n8505550501,Ann\n", ws.key);
    expect(r.body).toMatchObject({ created: 1, consent_column: null });
    expect(picked((await contactsOf(ws.key)).get("+18505550501"))).toMatchObject({ opted_in: true });
  });

  // [consent value, opted_in] for a new contact
  const VALUES: [string, boolean | string][] = [
    ["yes", true],
    ["No", false],
    ["TRUE", true],
    ["false", false],
    ["1", true],
    ["0", false],
    ["subscribed", true],
    ["Unsubscribed", false],
    ["not_subscribed", false],
    ["maybe", "SMS Consent must be yes or no"],
    ["2", "SMS Consent must be yes or no"],
  ];
  for (const [value, outcome] of VALUES) {
    it(`reads SMS Consent ${JSON.stringify(value)} as ${JSON.stringify(outcome)}`, async () => {
      const ws = await s.newWorkspace();
      const r = await csv(`Phone Number,SMS Consent\n8505550601,${value}\n`, ws.key);
      const made = (await contactsOf(ws.key)).get("+18505550601");
      const got = typeof outcome === "string" ? r.body.errors[0]?.error : made?.opted_in;
      expect({ value, got }).toEqual({ value, got: outcome });
    });
  }

  // [header, value, state kept]
  const STATES: [string, string, string | null][] = [
    ["state", "fl", "FL"],
    ["province", "ON", "ON"],
    ["Default Address Province Code", "RI", "RI"],
    ["Region", "TX", "TX"],
    ["State/Region", "Rhode Island", "RI"],
    ["state", "Atlantis", null],
  ];
  for (const [header, value, state] of STATES) {
    it(`keeps ${header}: ${value} as state ${state}`, async () => {
      const ws = await s.newWorkspace();
      await csv(`phone,${header}\n8505550701,${value}\n`, ws.key);
      const made = (await contactsOf(ws.key)).get("+18505550701") as Json;
      expect({ header, value, state: made.state }).toEqual({ header, value, state });
    });
  }

  it("answers 422 'phone_number column is required' for a file with no phone column of any name", async () => {
    const ws = await s.newWorkspace();
    const r = await csv("Email,Accepts SMS Marketing\na@example.com,yes\n", ws.key);
    expect({ status: r.status, error: r.body.error }).toEqual({
      status: 422,
      error: "phone_number column is required",
    });
  });

  it("answers 'timezone must be an IANA time zone' for a bad zone cell", async () => {
    const ws = await s.newWorkspace();
    const r = await csv("phone,timezone\n8505550801,Mars/Base\n", ws.key);
    expect(r.body.errors).toEqual([{ row: 2, error: "timezone must be an IANA time zone" }]);
  });
});
