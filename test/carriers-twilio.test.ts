/**
 * The Twilio adapter against a Prism mock of Twilio's published OpenAPI document
 * (vendored with its licence in `test/fixtures/vendor/twilio_api_v2010.json`): every request the adapter makes must validate against
 * the contract (Prism reports request violations as 4xx or in `sl-violations`; both fail the test).
 *
 * Prism is given a copy of the document that spells out one default: the form encoding of
 * CreateCall's array fields (StatusCallbackEvent, RecordingStatusCallbackEvent) is `style: form,
 * explode: true`, i.e. the field repeated, which is OpenAPI's default for form bodies and how
 * Twilio takes them. Prism 5 only reads a form field as an array when the document declares its
 * encoding (without it every StatusCallbackEvent is refused as "must be array"), and even then it
 * keeps the last of the repeated values, so the tests check the repetition themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { CarrierUnavailableError, type OutboundSms, SendWithdrawnError } from "../src/carriers/carrier";
import {
  mapTwilioCallStatus,
  mapTwilioStatus,
  sayTwiml,
  TWILIO_CALL_STATUS_PATH,
  TwilioCarrier,
  twilioSignature,
} from "../src/carriers/twilio";
import type { CallStatus, OutboundCall } from "../src/voice/provider";
import { freePort, startPrism } from "./support/prism";
import { startTestServer, type TestServer } from "./support/server";

const ROOT = resolve(import.meta.dir, "..");
const SPEC = resolve(ROOT, "test/fixtures/vendor/twilio_api_v2010.json");
const ACCOUNT_SID = "AC0123456789abcdef0123456789abcdef";
const AUTH_TOKEN = "test-auth-token-0123456789";
const CALLBACK_BASE = "https://hooks.example.test";

interface Recorded {
  method: string;
  url: string;
  status: number;
  /** The form body sent, if any. */
  body: string | null;
  requestViolations: unknown[];
}

let prism: { url: string; stop(): void } | null = null;
let prismUrl = "";
const recorded: Recorded[] = [];

/** fetch that keeps what Prism said about each request. */
const recordingFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const response = await fetch(input, init);
  const violations = JSON.parse(response.headers.get("sl-violations") ?? "[]") as { location: string[] }[];
  recorded.push({
    method: init?.method ?? "GET",
    url: String(input),
    status: response.status,
    body: typeof init?.body === "string" ? init.body : null,
    requestViolations: violations.filter((v) => v.location[0] === "request"),
  });
  return response;
}) as typeof fetch;

function adapter(apiBase = prismUrl, fetcher: typeof fetch = recordingFetch) {
  return new TwilioCarrier({
    accountSid: ACCOUNT_SID,
    authToken: AUTH_TOKEN,
    apiBase,
    publicUrl: CALLBACK_BASE,
    timeoutMs: 10_000,
    fetch: fetcher,
  });
}

/** Every request made since `from` was accepted by the contract. */
function expectOnContract(from: number) {
  const calls = recorded.slice(from);
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    expect({
      call: `${call.method} ${call.url}`,
      status: call.status < 400,
      violations: call.requestViolations,
    }).toEqual({
      call: `${call.method} ${call.url}`,
      status: true,
      violations: [],
    });
  }
}

beforeAll(async () => {
  if (!existsSync(SPEC)) {
    throw new Error(`Twilio OpenAPI document not found at ${SPEC}`);
  }
  // The document with CreateCall's array fields' form encoding (OpenAPI's default) made explicit.
  const document = JSON.parse(readFileSync(SPEC, "utf8"));
  const createCall =
    document.paths["/2010-04-01/Accounts/{AccountSid}/Calls.json"].post.requestBody.content[
      "application/x-www-form-urlencoded"
    ];
  createCall.encoding = Object.fromEntries(
    Object.entries(createCall.schema.properties as Record<string, { type?: string }>)
      .filter(([, property]) => property.type === "array")
      .map(([name]) => [name, { style: "form", explode: true }]),
  );
  expect(Object.keys(createCall.encoding)).toContain("StatusCallbackEvent");
  prism = await startPrism(document, "twilio_api_v2010.json");
  prismUrl = prism.url;
}, 70_000);

afterAll(() => prism?.stop());

const sms: OutboundSms = {
  messageId: "0193aaaa-0000-7000-8000-000000000001",
  workspaceId: "0193aaaa-0000-7000-8000-0000000000ff",
  from: "+14155550100",
  to: "+14155550123",
  body: "Hello from the contract test",
  statusCallbackUrl: "",
};

describe("Twilio adapter against Twilio's OpenAPI contract (Prism)", () => {
  it("searches local and toll-free numbers", async () => {
    const from = recorded.length;
    const local = await adapter().searchNumbers({
      country: "US",
      areaCode: "808",
      contains: "92",
      type: "local",
      limit: 5,
    });
    expect(local.length).toBeGreaterThan(0);
    expect(local[0].number).toMatch(/^\+\d{8,15}$/);
    expect(local[0].type).toBe("local");
    const tollFree = await adapter().searchNumbers({ country: "US", type: "toll_free", limit: 5 });
    expect(tollFree.every((n) => n.type === "toll_free")).toBe(true);
    expectOnContract(from);
    expect(recorded[from].url).toContain(
      `/2010-04-01/Accounts/${ACCOUNT_SID}/AvailablePhoneNumbers/US/Local.json`,
    );
    expect(recorded[from + 1].url).toContain("/AvailablePhoneNumbers/US/TollFree.json");
  });

  it("orders and releases a number (IncomingPhoneNumbers)", async () => {
    const from = recorded.length;
    const ordered = await adapter().orderNumber("+14155550123");
    expect(ordered.ok).toBe(true);
    if (!ordered.ok) return;
    expect(ordered.carrierNumberId).toMatch(/^PN/);
    await adapter().releaseNumber("+14155550123", ordered.carrierNumberId);
    expectOnContract(from);
    expect(recorded.slice(from).map((r) => r.method)).toEqual(["POST", "DELETE"]);
  });

  it("sends an SMS (Messages) and maps Twilio's status", async () => {
    const from = recorded.length;
    const result = await adapter().sendSms(sms);
    expect(result.accepted).toBe(true);
    if (!result.accepted) return;
    expect(result.carrierMessageId).toMatch(/^SM/);
    expect(result.status).toBe("QUEUED");
    expectOnContract(from);
  });

  it("looks a send up by listing Messages with To and From", async () => {
    const from = recorded.length;
    const lookup = await adapter().lookupSend(sms, Date.now() - 60_000);
    // The mock's example message has another body: not ours.
    expect(lookup).toEqual({ found: false });
    expectOnContract(from);
    expect(recorded[from].url).toContain("To=%2B14155550123");
  });

  it("fails the test when a request is off-contract (the mock really validates)", async () => {
    const from = recorded.length;
    await adapter().searchNumbers({ country: "US", areaCode: "abc", type: "local", limit: 5 });
    expect(recorded[from].status).toBe(422);
  });

  it("maps 5xx, 429 and network errors to CarrierUnavailableError", async () => {
    const down = Bun.serve({
      port: 0,
      fetch: (req) =>
        new Response("{}", {
          status: req.url.includes("Messages") ? 503 : 429,
          headers: { "retry-after": "7" },
        }),
    });
    try {
      const base = `http://127.0.0.1:${down.port}`;
      await expect(adapter(base, fetch).sendSms(sms)).rejects.toBeInstanceOf(CarrierUnavailableError);
      const throttled = await adapter(base, fetch)
        .orderNumber("+14155550123")
        .catch((error: unknown) => error);
      expect(throttled).toBeInstanceOf(CarrierUnavailableError);
      expect((throttled as CarrierUnavailableError).retryAfterMs).toBe(7000);
    } finally {
      down.stop(true);
    }
    const closed = await freePort();
    await expect(adapter(`http://127.0.0.1:${closed}`, fetch).sendSms(sms)).rejects.toBeInstanceOf(
      CarrierUnavailableError,
    );
  });

  it("sends nothing for a send whose job lost its lease: no request is made", async () => {
    let requests = 0;
    const counting = Bun.serve({
      port: 0,
      fetch: () => {
        requests++;
        return new Response("{}", { status: 500 });
      },
    });
    try {
      const withdrawn = adapter(`http://127.0.0.1:${counting.port}`, fetch).sendSms({
        ...sms,
        stillOurs: () => false,
      });
      await expect(withdrawn).rejects.toBeInstanceOf(SendWithdrawnError);
      expect(requests).toBe(0);
    } finally {
      counting.stop(true);
    }
  });

  it("treats refused credentials (401) as the carrier being unavailable, not as a refusal", async () => {
    const from = recorded.length;
    const wrong = new TwilioCarrier({
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      apiBase: prismUrl,
      publicUrl: CALLBACK_BASE,
      timeoutMs: 10_000,
      fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
        const headers = { ...(init?.headers as Record<string, string>) };
        delete headers.authorization;
        return await recordingFetch(input, { ...init, headers });
      }) as typeof fetch,
    });
    await expect(wrong.orderNumber("+14155550123")).rejects.toBeInstanceOf(CarrierUnavailableError);
    expect(recorded[from].status).toBe(401);
  });

  it("maps a 4xx refusal to a rejected send", async () => {
    const refusing = Bun.serve({
      port: 0,
      fetch: () =>
        Response.json(
          { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 },
          { status: 400 },
        ),
    });
    try {
      const result = await adapter(`http://127.0.0.1:${refusing.port}`, fetch).sendSms(sms);
      expect(result).toEqual({
        accepted: false,
        errorCode: "21211",
        errorMessage: "The 'To' number is not a valid phone number.",
      });
    } finally {
      refusing.stop(true);
    }
  });

  it("maps Twilio statuses to ours", () => {
    expect(
      [
        "queued",
        "accepted",
        "sending",
        "sent",
        "delivered",
        "read",
        "undelivered",
        "failed",
        "canceled",
        "received",
      ].map(mapTwilioStatus),
    ).toEqual([
      "QUEUED",
      "QUEUED",
      "SENT",
      "SENT",
      "DELIVERED",
      "DELIVERED",
      "UNDELIVERED",
      "FAILED",
      "FAILED",
      null,
    ]);
  });
});

const call: OutboundCall = {
  callId: "0193bbbb-0000-7000-8000-000000000001",
  workspaceId: "0193aaaa-0000-7000-8000-0000000000ff",
  from: "+14155550100",
  to: "+14155550123",
  say: `Tom & Jerry's <"reminder">`,
};

describe("Twilio calls against Twilio's OpenAPI contract (Prism)", () => {
  it("places a say call (Calls) with escaped TwiML, our callback URL and machine detection", async () => {
    const from = recorded.length;
    const result = await adapter().placeCall(call);
    // The mock answers the contract's example: sid CAaaaa..., status completed, answered_by null.
    expect(result).toEqual({ accepted: true, providerCallId: `CA${"a".repeat(32)}`, status: "COMPLETED" });
    expectOnContract(from);
    expect(recorded.slice(from).map((r) => r.method)).toEqual(["POST"]);
    expect(recorded[from].url).toBe(`${prismUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`);
    const form = new URLSearchParams(recorded[from].body ?? "");
    expect(form.get("To")).toBe(call.to);
    expect(form.get("From")).toBe(call.from);
    expect(form.get("Twiml")).toBe(
      "<Response><Say>Tom &amp; Jerry&apos;s &lt;&quot;reminder&quot;&gt;</Say></Response>",
    );
    expect(form.get("StatusCallback")).toBe(
      `${CALLBACK_BASE}${TWILIO_CALL_STATUS_PATH}?call_id=${call.callId}`,
    );
    expect(TWILIO_CALL_STATUS_PATH).toBe("/carriers/twilio/call-status");
    // Repeated, one field per event (Prism only sees the last of them).
    expect(form.getAll("StatusCallbackEvent")).toEqual(["initiated", "ringing", "answered", "completed"]);
    expect(form.get("StatusCallbackMethod")).toBe("POST");
    expect(form.get("MachineDetection")).toBe("Enable");
  });

  it("the mock really validates the Calls body (a repeated event field passes, a bad method does not)", async () => {
    const post = async (extra: [string, string][]) =>
      await recordingFetch(`${prismUrl}/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams([["To", call.to], ["From", call.from], ...extra]).toString(),
      });
    const good = await post([
      ["StatusCallbackEvent", "initiated"],
      ["StatusCallbackEvent", "completed"],
    ]);
    expect(good.status).toBe(201);
    await good.body?.cancel();
    const bad = await post([
      ["StatusCallbackEvent", "completed"],
      ["StatusCallbackMethod", "PUT"],
    ]);
    expect(bad.status).toBe(422);
    await bad.body?.cancel();
  });

  it("escapes every XML special character of the text and drops control characters", () => {
    expect(sayTwiml(`a&b<c>d"e'f\u0007g`)).toBe(
      "<Response><Say>a&amp;b&lt;c&gt;d&quot;e&apos;fg</Say></Response>",
    );
    expect(sayTwiml("&amp;")).toBe("<Response><Say>&amp;amp;</Say></Response>");
  });

  it("looks a call up by listing Calls with To, From and StartTime>", async () => {
    const from = recorded.length;
    const since = Date.now() - 60_000;
    const lookup = await adapter().lookupCall(call, since);
    // The mock's example calls were created in 2019: not ours.
    expect(lookup).toEqual({ found: false });
    expectOnContract(from);
    const url = new URL(recorded[from].url);
    expect(url.pathname).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`);
    expect(url.searchParams.get("To")).toBe(call.to);
    expect(url.searchParams.get("From")).toBe(call.from);
    expect(url.searchParams.get("PageSize")).toBe("50");
    // The document's name ("on or after") and date-time format; five minutes of clock skew.
    const after = url.searchParams.get("StartTime>") ?? "";
    expect(after).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Math.abs(Date.parse(after) - (since - 5 * 60_000))).toBeLessThan(1000);
  });

  it("finds a call created after `since` and maps its status with answered_by", async () => {
    const from = recorded.length;
    // The first example call: created Fri, 18 Oct 2019 17:00:00 +0000, completed, machine_start.
    const lookup = await adapter().lookupCall(call, Date.parse("2019-10-18T17:03:00Z"));
    expect(lookup).toEqual({ found: true, providerCallId: `CA${"a".repeat(32)}`, status: "VOICEMAIL" });
    expectOnContract(from);
  });

  it("maps a 4xx refusal of a call to a rejected placement", async () => {
    const refusing = Bun.serve({
      port: 0,
      fetch: () =>
        Response.json(
          { code: 21215, message: "Geographic permission is not enabled for this number.", status: 400 },
          { status: 400 },
        ),
    });
    try {
      const result = await adapter(`http://127.0.0.1:${refusing.port}`, fetch).placeCall(call);
      expect(result).toEqual({
        accepted: false,
        errorCode: "21215",
        errorMessage: "Geographic permission is not enabled for this number.",
      });
    } finally {
      refusing.stop(true);
    }
  });

  it("maps network errors, 5xx, 429 and refused credentials on calls to CarrierUnavailableError", async () => {
    const closed = await freePort();
    await expect(adapter(`http://127.0.0.1:${closed}`, fetch).placeCall(call)).rejects.toBeInstanceOf(
      CarrierUnavailableError,
    );
    await expect(
      adapter(`http://127.0.0.1:${closed}`, fetch).lookupCall(call, Date.now()),
    ).rejects.toBeInstanceOf(CarrierUnavailableError);
    for (const status of [503, 429, 401]) {
      const down = Bun.serve({ port: 0, fetch: () => new Response("{}", { status }) });
      try {
        await expect(adapter(`http://127.0.0.1:${down.port}`, fetch).placeCall(call)).rejects.toBeInstanceOf(
          CarrierUnavailableError,
        );
      } finally {
        down.stop(true);
      }
    }
  });

  it("orders a number and reports its capabilities (IncomingPhoneNumbers)", async () => {
    const from = recorded.length;
    const ordered = await adapter().orderNumber("+14155550123");
    // The contract's example number: voice and MMS, no SMS.
    expect(ordered).toEqual({
      ok: true,
      carrierNumberId: `PN${"a".repeat(32)}`,
      capabilities: { sms: false, voice: true, mms: true },
    });
    expectOnContract(from);
  });

  it("reads upper-case capability keys and leaves absent capabilities out", async () => {
    const answers = [
      { sid: "PN1", capabilities: { SMS: true, Voice: false, MMS: true } },
      { sid: "PN2", capabilities: null },
    ];
    const stub = Bun.serve({ port: 0, fetch: () => Response.json(answers.shift(), { status: 201 }) });
    try {
      const carrier = adapter(`http://127.0.0.1:${stub.port}`, fetch);
      expect(await carrier.orderNumber("+14155550123")).toEqual({
        ok: true,
        carrierNumberId: "PN1",
        capabilities: { sms: true, voice: false, mms: true },
      });
      expect(await carrier.orderNumber("+14155550124")).toEqual({ ok: true, carrierNumberId: "PN2" });
    } finally {
      stub.stop(true);
    }
  });

  it("maps Twilio call statuses (and AnsweredBy) to ours", () => {
    const table: [string, string | undefined, CallStatus | null][] = [
      ["queued", undefined, "QUEUED"],
      ["initiated", undefined, "QUEUED"],
      ["ringing", undefined, "RINGING"],
      ["in-progress", undefined, "IN_PROGRESS"],
      ["in-progress", "machine_start", "IN_PROGRESS"],
      ["completed", undefined, "COMPLETED"],
      ["completed", "human", "COMPLETED"],
      ["completed", "unknown", "COMPLETED"],
      ["completed", "machine_start", "VOICEMAIL"],
      ["completed", "machine_end_beep", "VOICEMAIL"],
      ["completed", "machine_end_silence", "VOICEMAIL"],
      ["completed", "machine_end_other", "VOICEMAIL"],
      ["completed", "fax", "FAILED"],
      ["busy", undefined, "BUSY"],
      ["no-answer", undefined, "NO_ANSWER"],
      ["failed", undefined, "FAILED"],
      ["canceled", undefined, "FAILED"],
      ["answered", undefined, null],
      ["", undefined, null],
    ];
    expect(table.map(([status, answeredBy]) => mapTwilioCallStatus(status, answeredBy))).toEqual(
      table.map(([, , expected]) => expected),
    );
  });
});

describe("Call status callbacks", () => {
  const url = `${CALLBACK_BASE}${TWILIO_CALL_STATUS_PATH}?call_id=call-1`;
  const signed = (params: Record<string, string>, token = AUTH_TOKEN) => ({
    url,
    headers: new Headers({ "x-twilio-signature": twilioSignature(token, url, params) }),
    params,
  });
  const completed = {
    CallSid: "CA123",
    CallStatus: "completed",
    AnsweredBy: "machine_end_beep",
    CallDuration: "17",
    Timestamp: "Tue, 31 Aug 2010 20:36:44 +0000",
    To: "+14155550123",
    From: "+14155550100",
  };

  it("parses a signed final status: duration, reason with AnsweredBy, end time, no transcript", () => {
    expect(adapter().parseCallStatusCallback(signed(completed))).toEqual({
      callId: "call-1",
      providerCallId: "CA123",
      status: "VOICEMAIL",
      durationSec: 17,
      endedReason: "completed:machine_end_beep",
      endedAt: Date.parse("2010-08-31T20:36:44Z"),
    });
    const { AnsweredBy: _, ...human } = completed;
    expect(
      adapter().parseCallStatusCallback(signed({ ...human, CallStatus: "no-answer", CallDuration: "0" })),
    ).toEqual({
      callId: "call-1",
      providerCallId: "CA123",
      status: "NO_ANSWER",
      durationSec: 0,
      endedReason: "no-answer",
      endedAt: Date.parse("2010-08-31T20:36:44Z"),
    });
  });

  it("parses a signed progress status without end fields", () => {
    const params = { CallSid: "CA123", CallStatus: "ringing", Timestamp: completed.Timestamp };
    expect(adapter().parseCallStatusCallback(signed(params))).toEqual({
      callId: "call-1",
      providerCallId: "CA123",
      status: "RINGING",
    });
  });

  it("returns null for a forged or tampered signature, an unknown status or no CallSid", () => {
    expect(adapter().parseCallStatusCallback(signed(completed, "wrong-token"))).toBeNull();
    expect(adapter().parseCallStatusCallback({ url, headers: new Headers(), params: completed })).toBeNull();
    const genuine = signed(completed);
    expect(
      adapter().parseCallStatusCallback({ ...genuine, params: { ...completed, CallStatus: "failed" } }),
    ).toBeNull();
    expect(adapter().parseCallStatusCallback(signed({ ...completed, CallStatus: "answered" }))).toBeNull();
    const { CallSid: _, ...noSid } = completed;
    expect(adapter().parseCallStatusCallback(signed(noSid))).toBeNull();
  });
});

describe("X-Twilio-Signature", () => {
  const url = `${CALLBACK_BASE}/carriers/twilio/status?message_id=abc`;
  const params = { MessageSid: "SM123", MessageStatus: "delivered", To: "+14155550123" };

  it("accepts a callback signed with the auth token and parses it", () => {
    const headers = new Headers({ "x-twilio-signature": twilioSignature(AUTH_TOKEN, url, params) });
    expect(adapter().parseStatusCallback({ url, headers, params })).toEqual({
      carrierMessageId: "SM123",
      messageId: "abc",
      status: "DELIVERED",
    });
  });

  it("refuses a forged, missing or tampered signature", () => {
    const forged = new Headers({ "x-twilio-signature": twilioSignature("wrong-token", url, params) });
    expect(adapter().parseStatusCallback({ url, headers: forged, params })).toBeNull();
    expect(adapter().parseStatusCallback({ url, headers: new Headers(), params })).toBeNull();
    const signed = new Headers({ "x-twilio-signature": twilioSignature(AUTH_TOKEN, url, params) });
    const tampered = { ...params, MessageStatus: "failed" };
    expect(adapter().parseStatusCallback({ url, headers: signed, params: tampered })).toBeNull();
    expect(adapter().parseInbound({ url, headers: forged, params })).toBeNull();
  });
});

describe("CARRIER=twilio over HTTP", () => {
  let s: TestServer;
  const saved: Record<string, string | undefined> = {};
  const env = {
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_CALLBACK_BASE_URL: CALLBACK_BASE,
  };

  beforeAll(async () => {
    for (const [key, value] of Object.entries({ ...env, TWILIO_API_BASE: prismUrl })) {
      saved[key] = process.env[key];
      process.env[key] = value;
    }
    s = await startTestServer({}, { CARRIER: "twilio" });
  });

  afterAll(async () => {
    await s?.stop();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  async function callback(path: string, params: Record<string, string>, signature: string) {
    const response = await fetch(`${s.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
      body: new URLSearchParams(params).toString(),
    });
    return { status: response.status, body: await response.json().catch(() => null) };
  }

  it("has no sandbox: 404 before the body is looked at", async () => {
    for (const body of [{}, { from: "+14155550123", to: "+14155550100", body: "hi" }]) {
      const r = await s.api("POST", "/v1/sandbox/inbound", body);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ ok: false, error: "Not found" });
    }
    expect((await s.api("GET", "/v1/sandbox/outbox")).status).toBe(404);
  });

  it("searches, orders and releases numbers through Twilio", async () => {
    const available = await s.api("GET", "/v1/numbers/available?area_code=808&limit=3");
    expect(available.status).toBe(200);
    expect(available.body.numbers.length).toBeGreaterThan(0);
    const ordered = await s.api("POST", "/v1/numbers", { number: available.body.numbers[0].number });
    expect(ordered.body).toMatchObject({ ok: true, added: 1, skipped: 0 });
    const released = await s.api("DELETE", `/v1/numbers/${ordered.body.ordered.id}`);
    expect(released.body.number.status).toBe("released");
  });

  it("answers 401 'Invalid signature' to a forged status callback and changes nothing", async () => {
    const params = { MessageSid: "SMforged", MessageStatus: "delivered" };
    const res = await callback("/carriers/twilio/status?message_id=x", params, "bm90IGEgc2lnbmF0dXJl");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ ok: false, error: "Invalid signature" });
  });

  it("acknowledges a genuine status callback that is not about a send status", async () => {
    const params = { MessageSid: "SMinbound", MessageStatus: "receiving" };
    const url = `${CALLBACK_BASE}/carriers/twilio/status`;
    const res = await callback("/carriers/twilio/status", params, twilioSignature(AUTH_TOKEN, url, params));
    expect(res.status).toBe(200);
  });

  it("answers 401 to a forged inbound webhook and records no message", async () => {
    const params = { MessageSid: "SMin1", From: "+14155550999", To: "+14155550123", Body: "hi" };
    const forged = twilioSignature("not-the-token", `${CALLBACK_BASE}/carriers/twilio/inbound`, params);
    const res = await callback("/carriers/twilio/inbound", params, forged);
    expect(res.status).toBe(401);
    const messages = await s.api("GET", "/v1/messages?direction=inbound");
    expect(messages.body.messages ?? []).toHaveLength(0);
  });

  it("sends through Twilio and applies a signed status callback", async () => {
    const number = (await s.api("GET", "/v1/numbers/available?area_code=808&limit=1")).body.numbers[0].number;
    await s.api("POST", "/v1/numbers", { number });
    const sent = await s.api("POST", "/v1/messages", {
      to: "+14155550177",
      from: number,
      body: "via twilio",
    });
    expect(sent.status).toBe(200);
    const id = sent.body.message.id;
    let message = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    for (let i = 0; i < 200 && !["SENT", "QUEUED"].includes(message.status); i++) {
      await Bun.sleep(25);
      message = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    }
    // The mock's Messages answer is the contract's example: sid SMaaaa..., status queued.
    const sid = `SM${"a".repeat(32)}`;
    const url = `${CALLBACK_BASE}/carriers/twilio/status?message_id=${id}`;
    const params = { MessageSid: sid, MessageStatus: "delivered", To: "+14155550177", From: number };
    const forged = await callback(
      `/carriers/twilio/status?message_id=${id}`,
      params,
      twilioSignature("x", url, params),
    );
    expect(forged.status).toBe(401);
    expect((await s.api("GET", `/v1/messages/${id}`)).body.message.status).not.toBe("DELIVERED");
    const ok = await callback(
      `/carriers/twilio/status?message_id=${id}`,
      params,
      twilioSignature(AUTH_TOKEN, url, params),
    );
    expect(ok.status).toBe(200);
    let after = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    for (let i = 0; i < 200 && after.status !== "DELIVERED"; i++) {
      await Bun.sleep(25);
      after = (await s.api("GET", `/v1/messages/${id}`)).body.message;
    }
    expect(after.status).toBe("DELIVERED");
  });

  it("accepts a correctly signed inbound webhook", async () => {
    // The mock offers one number; the previous test holds it.
    const number = (await s.api("GET", "/v1/numbers")).body.numbers[0].number;
    const params = { MessageSid: "SMin2", From: "+14155550999", To: number, Body: "hello there" };
    const signature = twilioSignature(AUTH_TOKEN, `${CALLBACK_BASE}/carriers/twilio/inbound`, params);
    const res = await fetch(`${s.url}/carriers/twilio/inbound`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
      body: new URLSearchParams(params).toString(),
    });
    expect(res.status).toBe(200);
    const messages = await s.api("GET", "/v1/messages?direction=inbound");
    expect(messages.body.messages.map((m: { body: string }) => m.body)).toContain("hello there");
  });
});
