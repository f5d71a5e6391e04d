/**
 * 10DLC registration and short-code requests end to end with the simulated carrier's registry
 * (API.md §3 10DLC, Short codes): brand and campaign lifecycles with approvals, rejections and their
 * reasons, the pre-flight on good and bad samples, the sending rule on and off, and short-code
 * requests to approval.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { eventLog } from "./support/event-log";
import { eventually } from "./support/messaging";
import { brandBody, campaignBody } from "./support/registration-bodies";
import { startTestServer, type TestServer } from "./support/server";
import { zoneAtLocalHour } from "./support/zones";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({}, { SIMULATED_REVIEW_MS: "60", SIMULATED_DELIVERY_MS: "20" });
});
afterAll(async () => await s.stop());
const log = eventLog(() => s);

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
type Json = any;

let numberSeq = 7000;
const newNumber = () => `+1415555${String(numberSeq++).padStart(4, "0")}`;

async function workspace(name = "Registration") {
  const ws = await s.newWorkspace(name);
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const eventsOf = async (type: string) => (await log.of(type, ws.workspaceId)).map((e) => e.data as Json);
  return { ...ws, api, eventsOf };
}

async function verifiedBrand(w: Awaited<ReturnType<typeof workspace>>, extra: Record<string, unknown> = {}) {
  const created = await w.api("POST", "/v1/10dlc/brands", brandBody(extra));
  expect(created.status).toBe(200);
  const done = await eventually(
    () => w.api("GET", `/v1/10dlc/brands/${created.body.brand.id}`),
    (res) => res.body.brand.status !== "PENDING",
  );
  return done.body.brand as Json;
}

describe("10DLC brands", () => {
  it("are PENDING, then reviewed by the simulated registry with reasons; brand.updated is emitted", async () => {
    const w = await workspace();
    await log.watch(w.key);
    const created = await w.api("POST", "/v1/10dlc/brands", brandBody());
    expect(created.body.brand).toMatchObject({
      status: "PENDING",
      legal_name: "Sunny Dental LLC",
      failure_reasons: [],
    });
    const verified = await verifiedBrand(w);
    expect(verified).toMatchObject({ status: "VERIFIED", failure_reasons: [] });
    const failed = await verifiedBrand(w, { ein: "00-0000000" });
    expect(failed).toMatchObject({
      status: "FAILED",
      failure_reasons: ["EIN 00-0000000 is not an issued EIN"],
    });
    const unverified = await verifiedBrand(w, { ein: "99-1234567" });
    expect(unverified.status).toBe("UNVERIFIED");
    expect((await w.eventsOf("brand.updated")).map((d) => d.status).sort()).toEqual(
      ["FAILED", "UNVERIFIED", "VERIFIED", "VERIFIED"].sort(),
    );
    const list = await w.api("GET", "/v1/10dlc/brands");
    expect(list.body.total).toBe(4);
  });

  it("edits only before verification (409 after); an edit is reviewed again", async () => {
    const w = await workspace();
    const failed = await verifiedBrand(w, { ein: "00-0000000" });
    const fixed = await w.api("PATCH", `/v1/10dlc/brands/${failed.id}`, { ein: "12-3456789" });
    expect(fixed.body.brand.status).toBe("PENDING");
    const again = await eventually(
      () => w.api("GET", `/v1/10dlc/brands/${failed.id}`),
      (res) => res.body.brand.status !== "PENDING",
    );
    expect(again.body.brand.status).toBe("VERIFIED");
    const locked = await w.api("PATCH", `/v1/10dlc/brands/${failed.id}`, { legal_name: "Other" });
    expect(locked.status).toBe(409);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ["a malformed EIN", { ein: "123456789" }, "ein must look like 12-3456789"],
    ["an unknown entity type", { entity_type: "LLC" }, "entity_type must be one of"],
    ["an unknown vertical", { vertical: "SPACE" }, "vertical must be one of"],
    [
      "a bad state",
      { address: { street: "1", city: "x", state: "XX", postal_code: "94105", country: "US" } },
      "address.state",
    ],
    [
      "an EIN for a sole proprietor",
      { entity_type: "SOLE_PROPRIETOR" },
      "ein must be empty for a SOLE_PROPRIETOR brand",
    ],
  ];
  for (const [what, extra, error] of bad) {
    it(`answers 422 for ${what}, writing nothing`, async () => {
      const w = await workspace();
      const res = await w.api("POST", "/v1/10dlc/brands", brandBody(extra));
      expect(res.status).toBe(422);
      expect(res.body.error).toStartWith(error);
      expect((await w.api("GET", "/v1/10dlc/brands")).body.total).toBe(0);
    });
  }
});

describe("10DLC campaigns", () => {
  it("are approved for a verified brand and rejected with the reason for an unverified one", async () => {
    const w = await workspace();
    await log.watch(w.key);
    const brand = await verifiedBrand(w);
    const created = await w.api("POST", "/v1/10dlc/campaigns", campaignBody(brand.id));
    expect(created.body.campaign).toMatchObject({ status: "PENDING", warnings: [] });
    const approved = await eventually(
      () => w.api("GET", `/v1/10dlc/campaigns/${created.body.campaign.id}`),
      (res) => res.body.campaign.status !== "PENDING",
    );
    expect(approved.body.campaign).toMatchObject({ status: "APPROVED", rejection_reasons: [] });
    expect((await w.eventsOf("tendlc_campaign.updated")).map((d) => d.status)).toEqual(["APPROVED"]);
    expect(
      (await w.api("PATCH", `/v1/10dlc/campaigns/${created.body.campaign.id}`, { use_case: "MIXED" })).status,
    ).toBe(409);

    const failedBrand = await verifiedBrand(w, { ein: "00-0000000" });
    const rejected = await w.api("POST", "/v1/10dlc/campaigns", campaignBody(failedBrand.id));
    const done = await eventually(
      () => w.api("GET", `/v1/10dlc/campaigns/${rejected.body.campaign.id}`),
      (res) => res.body.campaign.status !== "PENDING",
    );
    expect(done.body.campaign).toMatchObject({
      status: "REJECTED",
      rejection_reasons: ["The brand is FAILED: only verified brands can register campaigns"],
    });
  });

  it("answers 422 for the registry's rules and for unknown or foreign ids, writing nothing", async () => {
    const w = await workspace();
    const brand = await verifiedBrand(w);
    const other = await workspace("Other");
    const foreignNumber = newNumber();
    await other.api("POST", "/v1/numbers", { number: foreignNumber });
    const foreignId = (await other.api("GET", "/v1/numbers")).body.numbers[0].id;
    const cases: [Record<string, unknown>, string][] = [
      [
        { sample_messages: ["Sunny Dental: only one sample here. Reply STOP to opt out."] },
        "sample_messages must have at least 2 messages",
      ],
      [
        { optout_message: "You will get no more messages from Sunny Dental." },
        "optout_message must mention STOP",
      ],
      [
        { message_flow: "We send messages to people who are our customers all the time." },
        "message_flow must describe how consent is collected",
      ],
      [{ brand_id: "01936f8e-7c1a-7a3b-9f00-2d5e8c1b4a77" }, "brand_id does not exist"],
      [{ number_ids: [foreignId] }, "number_ids[0] does not exist"],
      [{ use_case: "SPAM" }, "use_case must be one of"],
    ];
    for (const [extra, error] of cases) {
      const res = await w.api("POST", "/v1/10dlc/campaigns", campaignBody(brand.id, extra));
      expect(res.status).toBe(422);
      expect(res.body.error).toStartWith(error);
    }
    // A pre-flight error blocks the registration too (a shortener in a sample).
    const shortener = await w.api(
      "POST",
      "/v1/10dlc/campaigns",
      campaignBody(brand.id, {
        has_embedded_links: true,
        sample_messages: [
          "Sunny Dental: book at https://bit.ly/abc123 today. Reply STOP to opt out.",
          "Sunny Dental: your cleaning is tomorrow at 10am. Reply STOP to opt out.",
        ],
      }),
    );
    expect(shortener.status).toBe(422);
    expect(shortener.body.error).toStartWith("sample_messages[0]: ");
    expect((await w.api("GET", "/v1/10dlc/campaigns")).body.total).toBe(0);
  });
});

describe("POST /v1/10dlc/campaigns/preflight", () => {
  it("passes good samples and names what carriers reject in bad ones, writing nothing", async () => {
    const w = await workspace();
    const brand = await verifiedBrand(w);
    const good = await w.api("POST", "/v1/10dlc/campaigns/preflight", campaignBody(brand.id));
    expect(good.body).toEqual({ ok: true, preflight: { passed: true, issues: [] } });
    const bad = await w.api(
      "POST",
      "/v1/10dlc/campaigns/preflight",
      campaignBody(brand.id, {
        sample_messages: [
          "Big sale on cigarettes at https://bit.ly/xyz now!",
          "Get 50% off your next visit, call 415-555-0100",
        ],
      }),
    );
    expect(bad.body.preflight.passed).toBe(false);
    const codes = new Set(bad.body.preflight.issues.map((i: Json) => i.code));
    for (const code of [
      "brand_name_missing",
      "opt_out_missing",
      "public_url_shortener",
      "embedded_link_mismatch",
      "embedded_phone_mismatch",
      "shaft_content",
      "use_case_mismatch",
    ])
      expect(codes.has(code)).toBe(true);
    expect(bad.body.preflight.issues.find((i: Json) => i.code === "public_url_shortener").field).toBe(
      "sample_messages[0]",
    );
    expect((await w.api("GET", "/v1/10dlc/campaigns")).body.total).toBe(0);
  });
});

describe("settings.require_registration", () => {
  it("off: anything sends; on: unregistered US local numbers are refused (422) or skipped (unregistered_number) until an approved campaign has them", async () => {
    const w = await workspace();
    const ours = newNumber();
    await w.api("POST", "/v1/numbers", { number: ours });
    const numberId = (await w.api("GET", "/v1/numbers")).body.numbers[0].id;
    expect((await w.api("GET", "/v1/settings")).body.settings.require_registration).toBe(false);
    expect((await w.api("POST", "/v1/messages", { to: "+14155550901", body: "hi" })).status).toBe(200);

    await w.api("PATCH", "/v1/settings", { require_registration: true });
    const refused = await w.api("POST", "/v1/messages", { to: "+14155550902", body: "hi" });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toBe("from is not registered for A2P messaging");

    const contact = (
      await w.api("POST", "/v1/contacts", { phone_number: "+14155550903", timezone: zoneAtLocalHour(12) })
    ).body.contact;
    const campaign = (
      await w.api("POST", "/v1/campaigns", {
        name: "Reminder",
        message: { body: "Sunny Dental reminder. Reply STOP to opt out." },
        audience: { contact_ids: [contact.id] },
        quiet_hours: { enabled: false },
      })
    ).body.campaign;
    await w.api("POST", `/v1/campaigns/${campaign.id}/launch`);
    const recipients = await eventually(
      () => w.api("GET", `/v1/campaigns/${campaign.id}/recipients`),
      (res) => res.body.recipients?.[0]?.outcome === "skipped",
    );
    expect(recipients.body.recipients[0]).toMatchObject({
      outcome: "skipped",
      reason: "unregistered_number",
    });

    const brand = await verifiedBrand(w);
    const registered = await w.api(
      "POST",
      "/v1/10dlc/campaigns",
      campaignBody(brand.id, { number_ids: [numberId] }),
    );
    await eventually(
      () => w.api("GET", `/v1/10dlc/campaigns/${registered.body.campaign.id}`),
      (res) => res.body.campaign.status === "APPROVED",
    );
    expect((await w.api("POST", "/v1/messages", { to: "+14155550904", body: "hi" })).status).toBe(200);
  });
});

describe("short-code requests", () => {
  it("go submitted → in_review → approved, and the code becomes a number of the workspace", async () => {
    const w = await workspace();
    await log.watch(w.key);
    const created = await w.api("POST", "/v1/short-codes/requests", {
      type: "random",
      use_case: "MARKETING",
      monthly_volume: 50_000,
      sample_messages: ["Sunny Dental: 20% off whitening this week. Reply STOP to opt out."],
    });
    expect(created.body.request).toMatchObject({ status: "submitted", short_code: null });
    const done = await eventually(
      () => w.api("GET", `/v1/short-codes/requests/${created.body.request.id}`),
      (res) => res.body.request.status === "approved",
    );
    expect(done.body.request.short_code).toMatch(/^[2-9]\d{4}$/);
    expect((await w.eventsOf("short_code.updated")).map((d) => d.status)).toEqual(["in_review", "approved"]);
    const numbers = (await w.api("GET", "/v1/numbers")).body.numbers.map((n: Json) => n.number);
    expect(numbers).toContain(done.body.request.short_code);
  });

  it("rejects a leased vanity code with the reason, and answers 422 for a vanity code that is not 5–6 digits", async () => {
    const w = await workspace();
    const leased = await w.api("POST", "/v1/short-codes/requests", {
      type: "vanity",
      vanity_code: "12345",
      use_case: "MARKETING",
      monthly_volume: 1000,
      sample_messages: ["Sunny Dental news. Reply STOP to opt out."],
    });
    const done = await eventually(
      () => w.api("GET", `/v1/short-codes/requests/${leased.body.request.id}`),
      (res) => res.body.request.status === "rejected",
    );
    expect(done.body.request.rejection_reasons).toEqual(["Vanity code 12345 is already leased"]);
    const bad = await w.api("POST", "/v1/short-codes/requests", {
      type: "vanity",
      vanity_code: "123",
      use_case: "MARKETING",
      monthly_volume: 1000,
      sample_messages: ["Sunny Dental news. Reply STOP to opt out."],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toBe("vanity_code must be 5 or 6 digits");
  });
});
