// End to end (API.md §7.1): contacts imported from a CSV without a zone column keep every zone of their
// area code, so a campaign previewed at a time when one of those zones is outside hours defers them.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestServer, type TestServer } from "./support/server";

type Json = Record<string, unknown>;
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => await s.stop());

/** The instant at which the wall clock of `zone` reads `hour:minute` on the first Wednesday at least two days ahead. */
function nextWednesdayAt(zone: string, hour: number, minute: number): number {
  const day = new Date(Date.now() + 2 * 86_400_000);
  while (day.getUTCDay() !== 3) day.setUTCDate(day.getUTCDate() + 1);
  const guess = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), hour, minute);
  // Correct the guess by the zone's offset at that moment (twice: the offset can change in between).
  let at = guess;
  for (let i = 0; i < 2; i++) {
    const parts = Object.fromEntries(
      new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
      })
        .formatToParts(new Date(at))
        .map((p) => [p.type, Number(p.value)]),
    );
    const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute);
    at += guess - wall;
  }
  return at;
}

async function workspaceWithNumber() {
  const ws = await s.newWorkspace();
  const api = async (method: string, path: string, body?: unknown) =>
    await s.api(method, path, body, { key: ws.key });
  const available = await api("GET", "/v1/numbers/available?area_code=212&limit=5");
  let number: string | null = null;
  for (const candidate of available.body.numbers) {
    const res = await api("POST", "/v1/numbers", { number: candidate.number });
    if (res.body.added === 1) {
      number = candidate.number;
      break;
    }
  }
  if (!number) throw new Error("no number available");
  return { ...ws, api, number };
}

const FILE = [
  "Phone,First Name,Accepts SMS Marketing",
  "+18505550901,Pensacola or Tallahassee,yes",
  "+14485550902,The 850 overlay,yes",
  "+12125550903,New York,yes",
  "+14235550904,Chattanooga or Knoxville,yes",
].join("\n");

describe("GET /v1/campaigns/{id}/preview after an import without a zone column", () => {
  // [case, moment, zone of the moment, outcome per phone]
  const CASES: [string, number, string, Record<string, string>][] = [
    [
      "07:30 Central (08:30 Eastern): the Central part of 850, 448 and 423 is before 8:00",
      7 * 60 + 30,
      "America/Chicago",
      { "+18505550901": "defer", "+14485550902": "defer", "+12125550903": "send", "+14235550904": "defer" },
    ],
    [
      "19:30 Central (20:30 Eastern): Florida's 20:00 in the Eastern part of 850 and 448",
      19 * 60 + 30,
      "America/Chicago",
      { "+18505550901": "defer", "+14485550902": "defer", "+12125550903": "send", "+14235550904": "send" },
    ],
    [
      "20:30 Central (21:30 Eastern): quiet hours in the Eastern part of 423",
      20 * 60 + 30,
      "America/Chicago",
      { "+18505550901": "defer", "+14485550902": "defer", "+12125550903": "defer", "+14235550904": "defer" },
    ],
    [
      "12:00 Central: every zone is inside hours",
      12 * 60,
      "America/Chicago",
      { "+18505550901": "send", "+14485550902": "send", "+12125550903": "send", "+14235550904": "send" },
    ],
  ];

  for (const [name, minuteOfDay, zone, expected] of CASES) {
    it(`defers a contact while any zone of its area code is outside hours: ${name}`, async () => {
      const w = await workspaceWithNumber();
      const list = (await w.api("POST", "/v1/lists", { name: "Imported" })).body.list as Json;
      const imported = await s.api("POST", `/v1/contacts/import?list_id=${list.id}`, undefined, {
        key: w.key,
        raw: FILE,
        headers: { "content-type": "text/csv" },
      });
      expect(imported.body).toMatchObject({ created: 4, errors: [] });
      const sendAt = nextWednesdayAt(zone, Math.floor(minuteOfDay / 60), minuteOfDay % 60);
      const campaign = (
        await w.api("POST", "/v1/campaigns", {
          name: "Spring",
          message: { body: "Spring sale at the shop. Reply STOP to opt out" },
          audience: { list_ids: [list.id] },
          from: w.number,
          send_at: new Date(sendAt).toISOString(),
        })
      ).body.campaign as Json;
      const preview = (await w.api("GET", `/v1/campaigns/${campaign.id}/preview?limit=10`)).body.preview;
      const contacts = (await w.api("GET", "/v1/contacts?limit=10")).body.contacts as Json[];
      const phoneOf = new Map(contacts.map((c) => [c.id, c.phone_number]));
      const outcomes = Object.fromEntries(
        (preview.contacts as Json[]).map((p) => [phoneOf.get(p.contact_id), p.outcome]),
      );
      expect({ name, outcomes }).toEqual({ name, outcomes: expected });
      const deferred = Object.values(expected).filter((o) => o === "defer").length;
      expect({ name, deferred: preview.deferred, sendable: preview.sendable }).toEqual({
        name,
        deferred,
        sendable: 4 - deferred,
      });
    });
  }

  it("sends to an 850 contact once its zone is given as Eastern (PATCH), and defers again after timezone: null", async () => {
    const w = await workspaceWithNumber();
    const contact = (await w.api("POST", "/v1/contacts", { phone_number: "+18505550911" })).body
      .contact as Json;
    const sendAt = nextWednesdayAt("America/Chicago", 7, 30);
    const campaign = (
      await w.api("POST", "/v1/campaigns", {
        name: "Spring",
        message: { body: "Spring sale. Reply STOP to opt out" },
        audience: { contact_ids: [contact.id] },
        from: w.number,
        send_at: new Date(sendAt).toISOString(),
      })
    ).body.campaign as Json;
    const outcome = async () =>
      ((await w.api("GET", `/v1/campaigns/${campaign.id}/preview`)).body.preview.contacts as Json[])[0]
        ?.outcome;
    const steps: [Record<string, unknown>, string][] = [
      [{}, "defer"],
      [{ timezone: "America/New_York" }, "send"],
      [{ timezone: null }, "defer"],
    ];
    for (const [patch, expected] of steps) {
      if (Object.keys(patch).length > 0) await w.api("PATCH", `/v1/contacts/${contact.id}`, patch);
      expect({ patch, outcome: await outcome() }).toEqual({ patch, outcome: expected });
    }
  });
});
