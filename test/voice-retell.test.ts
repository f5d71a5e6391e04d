/**
 * The Retell voice adapter against a Prism mock of Retell's published OpenAPI document
 * (vendored with its licence in `test/fixtures/vendor/retell_openapi.yaml`): every request the
 * adapter makes must validate against the contract (Prism reports request violations as 4xx or in
 * `sl-violations`; both fail the test). Error mapping runs against tiny local servers; status
 * mapping, signatures and webhook parsing are pure.
 *
 * Prism is served a copy of the document with one change: a `nullable: true` enum that also lists
 * `null` loses that `null`. Prism's OpenAPI→JSON Schema step adds `null` to such enums again, the
 * duplicate makes Ajv refuse the whole request schema, and Prism then skips request validation
 * without a word (create-agent, create/update-retell-llm, create-phone-call all answered 201 to
 * anything). Without the duplicate the schemas mean the same and compile; the off-contract test
 * below proves each operation used here really validates.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  type CallLookup,
  type CallStatus,
  type OutboundCall,
  type ProviderAgentRef,
  type VoiceAgentSpec,
  type VoiceSettings,
  VoiceUnavailableError,
} from "../src/voice/provider";
import { mapRetellCall, RetellVoice, retellSignature } from "../src/voice/retell";
import { freePort, startPrism } from "./support/prism";

const ROOT = resolve(import.meta.dir, "..");
const SPEC = resolve(ROOT, "test/fixtures/vendor/retell_openapi.yaml");
const API_KEY = "key_test_0123456789abcdef";
/** The ids in the document's examples, which Prism answers with. */
const EXAMPLE_ID = "oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD";
const EXAMPLE_CALL_ID = "Jabr9TXYYJHfvl6Syypi88rdAHYHmcq6";

interface Recorded {
  method: string;
  url: string;
  status: number;
  body: unknown;
  requestViolations: unknown[];
}

let prism: { url: string; stop(): void } | null = null;
let prismUrl = "";
const recorded: Recorded[] = [];

/** fetch that keeps each request's body and what Prism said about it. */
const recordingFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const response = await fetch(input, init);
  const violations = JSON.parse(response.headers.get("sl-violations") ?? "[]") as { location: string[] }[];
  recorded.push({
    method: init?.method ?? "GET",
    url: String(input),
    status: response.status,
    body: typeof init?.body === "string" ? JSON.parse(init.body) : null,
    requestViolations: violations.filter((v) => v.location[0] === "request"),
  });
  return response;
}) as typeof fetch;

function adapter(apiBase = prismUrl, fetcher: typeof fetch = recordingFetch, timeoutMs = 10_000) {
  return new RetellVoice({ apiKey: API_KEY, apiBase, timeoutMs, fetch: fetcher });
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

/** "METHOD /path" of each request since `from`. */
function requestsSince(from: number): string[] {
  return recorded.slice(from).map((r) => `${r.method} ${new URL(r.url).pathname}`);
}

/** A local server answering with `answer`; records what it was asked. */
function stubServer(answer: (request: Request, body: unknown) => Response | Promise<Response>) {
  const seen: { method: string; path: string; body: unknown; authorization: string | null }[] = [];
  const server = Bun.serve({
    port: 0,
    async fetch(request) {
      const text = await request.text();
      const body = text ? JSON.parse(text) : null;
      seen.push({
        method: request.method,
        path: new URL(request.url).pathname,
        body,
        authorization: request.headers.get("authorization"),
      });
      return await answer(request, body);
    },
  });
  return { base: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) };
}

/** The vendored document, parsed. */
function retellDocument(): Record<string, unknown> {
  return Bun.YAML.parse(readFileSync(SPEC, "utf8")) as Record<string, unknown>;
}

/** Drops `null` from the enums of nullable schemas (see the header): Prism adds it back. */
function withoutDuplicateNulls(node: unknown): number {
  if (Array.isArray(node)) return node.reduce((n: number, item) => n + withoutDuplicateNulls(item), 0);
  if (!node || typeof node !== "object") return 0;
  const schema = node as { nullable?: unknown; enum?: unknown[] };
  let changed = 0;
  if (schema.nullable === true && Array.isArray(schema.enum) && schema.enum.includes(null)) {
    schema.enum = schema.enum.filter((value) => value !== null);
    changed = 1;
  }
  return changed + Object.values(node).reduce((n: number, child) => n + withoutDuplicateNulls(child), 0);
}

beforeAll(async () => {
  if (!existsSync(SPEC)) throw new Error(`Retell OpenAPI document not found at ${SPEC}`);
  const document = retellDocument();
  expect(withoutDuplicateNulls(document)).toBeGreaterThan(0);
  prism = await startPrism(document, "retell_openapi.json");
  prismUrl = prism.url;
}, 70_000);

afterAll(() => prism?.stop());

const VOICE: VoiceSettings = {
  voice_id: "11labs-Adrian",
  language: "en-GB",
  end_call: true,
  speed: 1.1,
  temperature: 0.7,
  volume: 1.2,
  responsiveness: 0.8,
  interruption_sensitivity: 0.6,
  enable_backchannel: true,
  backchannel_frequency: 0.5,
  reminder_trigger_ms: 8000,
  end_call_after_silence_ms: 30_000,
  max_call_duration_ms: 600_000,
  ambient_sound: "coffee-shop",
  boosted_keywords: ["Bright Dental", "Ava"],
  model_temperature: 0.3,
  voicemail_message: "Hi, this is Ava from Bright Dental. Please call us back.",
};

function agentSpec(ref: ProviderAgentRef | null = null, voice: Partial<VoiceSettings> = {}): VoiceAgentSpec {
  return {
    id: "0193bbbb-0000-7000-8000-000000000001",
    name: "Appointment reminders",
    systemPrompt: "You are Ava, calling for Bright Dental.",
    goal: "Confirm tomorrow's appointment",
    greeting: "Hi, this is Ava from Bright Dental.",
    guardrails: ["Never give medical advice", "Do not discuss prices"],
    knowledge: "Open Monday to Friday, 9am to 5pm.",
    tone: "friendly",
    voice: { ...VOICE, ...voice },
    ref,
  };
}

const EXPECTED_PROMPT = [
  "You are Ava, calling for Bright Dental.",
  "Goal: Confirm tomorrow's appointment",
  "Tone: friendly",
  "Rules:\n- Never give medical advice\n- Do not discuss prices",
  "Knowledge:\nOpen Monday to Friday, 9am to 5pm.",
].join("\n\n");

function call(ref: ProviderAgentRef | null = { llm_id: "llm_ours", agent_id: "agent_ours" }): OutboundCall {
  return {
    callId: "0193cccc-0000-7000-8000-000000000042",
    workspaceId: "0193aaaa-0000-7000-8000-0000000000ff",
    from: "+14155550100",
    to: "+14155550123",
    agent: agentSpec(ref),
  };
}

describe("Retell adapter against Retell's OpenAPI contract (Prism)", () => {
  it("lists voices (GET /list-voices): voice_name → name, accent → language, kept for ten minutes", async () => {
    const from = recorded.length;
    const retell = adapter();
    const voices = await retell.listVoices();
    expect(voices).toEqual([
      {
        voice_id: "retell-Cimo",
        name: "Adrian",
        provider: "elevenlabs",
        language: "American",
        gender: "male",
      },
    ]);
    expect(await retell.listVoices()).toEqual(voices);
    expectOnContract(from);
    expect(requestsSince(from)).toEqual(["GET /list-voices"]);
  });

  it("creates a retell-llm, then an agent speaking with it (syncAgent without a ref)", async () => {
    const from = recorded.length;
    const ref = await adapter().syncAgent(agentSpec());
    expect(ref).toEqual({ llm_id: EXAMPLE_ID, agent_id: EXAMPLE_ID });
    expectOnContract(from);
    expect(requestsSince(from)).toEqual(["POST /create-retell-llm", "POST /create-agent"]);
    expect(recorded[from].body).toEqual({
      general_prompt: EXPECTED_PROMPT,
      begin_message: "Hi, this is Ava from Bright Dental.",
      start_speaker: "agent",
      model_temperature: 0.3,
      general_tools: [
        { type: "end_call", name: "end_call", description: "End the call when the conversation is over." },
      ],
    });
    expect(recorded[from + 1].body).toEqual({
      response_engine: { type: "retell-llm", llm_id: EXAMPLE_ID },
      agent_name: "Appointment reminders",
      voice_id: "11labs-Adrian",
      language: "en-GB",
      voice_speed: 1.1,
      voice_temperature: 0.7,
      volume: 1.2,
      responsiveness: 0.8,
      interruption_sensitivity: 0.6,
      enable_backchannel: true,
      backchannel_frequency: 0.5,
      reminder_trigger_ms: 8000,
      end_call_after_silence_ms: 30_000,
      max_call_duration_ms: 600_000,
      ambient_sound: "coffee-shop",
      boosted_keywords: ["Bright Dental", "Ava"],
      voicemail_option: {
        action: { type: "static_text", text: "Hi, this is Ava from Bright Dental. Please call us back." },
      },
    });
  });

  it("sends the defaults on the contract too: no voice, no sound, hang up on voicemail, no end-call tool", async () => {
    const from = recorded.length;
    const spec = agentSpec(null, {
      voice_id: null,
      language: "es-MX",
      ambient_sound: "none",
      voicemail_message: null,
      end_call: false,
    });
    await adapter().syncAgent({ ...spec, greeting: null, goal: null, guardrails: [], knowledge: "" });
    expectOnContract(from);
    expect(recorded[from].body).toMatchObject({
      general_prompt: "You are Ava, calling for Bright Dental.\n\nTone: friendly",
      begin_message: null,
      general_tools: [],
    });
    expect(recorded[from + 1].body).toMatchObject({
      voice_id: "retell-Cimo",
      language: "es-419",
      ambient_sound: null,
      voicemail_option: { action: { type: "hangup" } },
    });
  });

  it("updates both with PATCH when the agent was synced before", async () => {
    const from = recorded.length;
    const ref = { llm_id: "llm_ours", agent_id: "agent_ours" };
    expect(await adapter().syncAgent(agentSpec(ref))).toEqual(ref);
    expectOnContract(from);
    expect(requestsSince(from)).toEqual([
      "PATCH /update-retell-llm/llm_ours",
      "PATCH /update-agent/agent_ours",
    ]);
    expect(recorded[from].body).toMatchObject({ general_prompt: EXPECTED_PROMPT });
    expect(recorded[from + 1].body).toMatchObject({
      response_engine: { type: "retell-llm", llm_id: "llm_ours" },
      voice_speed: 1.1,
    });
  });

  it("places a call with our call id in metadata (POST /v2/create-phone-call)", async () => {
    const from = recorded.length;
    const placed = await adapter().placeCall(call());
    // The mock's call is the document's example: call_status registered.
    expect(placed).toEqual({ accepted: true, providerCallId: EXAMPLE_CALL_ID, status: "RINGING" });
    expectOnContract(from);
    expect(requestsSince(from)).toEqual(["POST /v2/create-phone-call"]);
    expect(recorded[from].body).toEqual({
      from_number: "+14155550100",
      to_number: "+14155550123",
      override_agent_id: "agent_ours",
      metadata: {
        call_id: "0193cccc-0000-7000-8000-000000000042",
        workspace_id: "0193aaaa-0000-7000-8000-0000000000ff",
      },
    });
  });

  it("refuses to place a call for an agent that was never synced, without asking Retell", async () => {
    const from = recorded.length;
    expect(await adapter().placeCall(call(null))).toEqual({
      accepted: false,
      errorCode: "agent_not_synced",
      errorMessage: "The voice agent has not been synced to Retell",
    });
    expect(recorded.length).toBe(from);
  });

  it("looks a call up by metadata.call_id (POST /v2/list-calls)", async () => {
    const from = recorded.length;
    // The mock's calls carry empty metadata: not ours.
    expect(await adapter().lookupCall(call(), Date.now() - 60_000)).toEqual({ found: false });
    expectOnContract(from);
    expect(requestsSince(from)).toEqual(["POST /v2/list-calls", "POST /v2/list-calls"]);
    expect(recorded[from].body).toEqual({
      filter_criteria: {
        from_number: ["+14155550100"],
        to_number: ["+14155550123"],
        metadata: { "metadata.call_id": ["0193cccc-0000-7000-8000-000000000042"] },
      },
      sort_order: "descending",
      limit: 50,
    });
    expect(recorded[from + 1].body).toMatchObject({
      filter_criteria: { from_number: ["+14155550100"], to_number: ["+14155550123"] },
    });
    expect((recorded[from + 1].body as { filter_criteria: object }).filter_criteria).not.toHaveProperty(
      "metadata",
    );
  });

  it("fails the test when a request is off-contract (the mock really validates each operation used)", async () => {
    const from = recorded.length;
    const engine = { type: "retell-llm", llm_id: "x" };
    const offContract: [string, string, unknown][] = [
      ["POST", "/v2/create-phone-call", { from_number: "+14155550100", metadata: { call_id: "x" } }],
      ["POST", "/create-agent", { response_engine: engine, voice_id: "v", ambient_sound: "none" }],
      ["PATCH", "/update-agent/agent_ours", { voicemail_option: { action: { type: "static_text" } } }],
      ["POST", "/create-retell-llm", { model_temperature: "warm" }],
      ["PATCH", "/update-retell-llm/llm_ours", { general_tools: [{ type: "end_call" }] }],
      ["POST", "/v2/list-calls", { filter_criteria: { to_number: "+14155550123" } }],
    ];
    for (const [method, path, body] of offContract) {
      await recordingFetch(`${prismUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    }
    const answers = recorded.slice(from);
    expect(
      answers.map(
        (r) => `${r.method} ${new URL(r.url).pathname} ${r.status >= 400 && r.requestViolations.length > 0}`,
      ),
    ).toEqual(offContract.map(([method, path]) => `${method} ${path} true`));
  });

  it("treats a refused API key (401) as Retell being unavailable, not as a refusal", async () => {
    const from = recorded.length;
    const withoutKey = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = { ...(init?.headers as Record<string, string>) };
      delete headers.authorization;
      return await recordingFetch(input, { ...init, headers });
    }) as typeof fetch;
    await expect(adapter(prismUrl, withoutKey).placeCall(call())).rejects.toBeInstanceOf(
      VoiceUnavailableError,
    );
    expect(recorded[from].status).toBe(401);
  });
});

describe("Retell adapter: answers off the happy path", () => {
  it("maps 5xx and 429 to VoiceUnavailableError with Retry-After in ms", async () => {
    const stub = stubServer((request) =>
      request.url.includes("create-phone-call")
        ? new Response("{}", { status: 503, headers: { "retry-after": "7" } })
        : new Response("{}", { status: 429 }),
    );
    try {
      const unavailable = await adapter(stub.base, fetch)
        .placeCall(call())
        .catch((error: unknown) => error);
      expect(unavailable).toBeInstanceOf(VoiceUnavailableError);
      expect((unavailable as VoiceUnavailableError).retryAfterMs).toBe(7000);
      const throttled = await adapter(stub.base, fetch)
        .syncAgent(agentSpec())
        .catch((error: unknown) => error);
      expect(throttled).toBeInstanceOf(VoiceUnavailableError);
      expect((throttled as VoiceUnavailableError).message).toBe("Retell answered 429");
      expect((throttled as VoiceUnavailableError).retryAfterMs).toBeUndefined();
      expect(stub.seen[0].authorization).toBe(`Bearer ${API_KEY}`);
    } finally {
      stub.stop();
    }
  });

  it("maps an unreachable host and a timeout to VoiceUnavailableError", async () => {
    const closed = await freePort();
    await expect(adapter(`http://127.0.0.1:${closed}`, fetch).listVoices()).rejects.toBeInstanceOf(
      VoiceUnavailableError,
    );
    const slow = stubServer(async () => {
      await Bun.sleep(500);
      return Response.json([]);
    });
    try {
      await expect(adapter(slow.base, fetch, 50).listVoices()).rejects.toBeInstanceOf(VoiceUnavailableError);
    } finally {
      slow.stop();
    }
  });

  it("maps 401 and 403 to VoiceUnavailableError on every operation", async () => {
    const stub = stubServer((request) =>
      Response.json(
        { status: "error", message: "API key is missing or invalid." },
        { status: request.method === "GET" ? 403 : 401 },
      ),
    );
    try {
      const retell = adapter(stub.base, fetch);
      await expect(retell.listVoices()).rejects.toBeInstanceOf(VoiceUnavailableError);
      await expect(retell.syncAgent(agentSpec())).rejects.toBeInstanceOf(VoiceUnavailableError);
      await expect(retell.placeCall(call())).rejects.toBeInstanceOf(VoiceUnavailableError);
      await expect(retell.lookupCall(call(), 0)).rejects.toBeInstanceOf(VoiceUnavailableError);
    } finally {
      stub.stop();
    }
  });

  it("maps another 4xx to a refused placement, and to VoiceUnavailableError with Retell's message elsewhere", async () => {
    const stub = stubServer(() =>
      Response.json(
        { status: "error", message: "Cannot find requested asset under given api key." },
        { status: 422 },
      ),
    );
    try {
      const retell = adapter(stub.base, fetch);
      expect(await retell.placeCall(call())).toEqual({
        accepted: false,
        errorCode: "422",
        errorMessage: "Cannot find requested asset under given api key.",
      });
      const sync = await retell.syncAgent(agentSpec()).catch((error: unknown) => error);
      expect(sync).toBeInstanceOf(VoiceUnavailableError);
      expect((sync as Error).message).toBe(
        "Retell refused the new retell-llm: Cannot find requested asset under given api key.",
      );
      const voices = await retell.listVoices().catch((error: unknown) => error);
      expect(voices).toBeInstanceOf(VoiceUnavailableError);
      expect((voices as Error).message).toContain("Cannot find requested asset");
    } finally {
      stub.stop();
    }
  });

  it("creates the llm and the agent anew when an update answers 404 (deleted on Retell's side)", async () => {
    const stub = stubServer((request) => {
      const path = new URL(request.url).pathname;
      if (path.startsWith("/update-"))
        return Response.json({ status: "error", message: "Not found" }, { status: 404 });
      if (path === "/create-retell-llm") return Response.json({ llm_id: "llm_new" }, { status: 201 });
      return Response.json({ agent_id: "agent_new", version: 0 }, { status: 201 });
    });
    try {
      const ref = await adapter(stub.base, fetch).syncAgent(
        agentSpec({ llm_id: "llm_gone", agent_id: "agent_gone" }),
      );
      expect(ref).toEqual({ llm_id: "llm_new", agent_id: "agent_new" });
      expect(stub.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
        "PATCH /update-retell-llm/llm_gone",
        "POST /create-retell-llm",
        "PATCH /update-agent/agent_gone",
        "POST /create-agent",
      ]);
      // The agent (updated or created) speaks with the llm that exists now.
      expect(stub.seen[2].body).toMatchObject({ response_engine: { type: "retell-llm", llm_id: "llm_new" } });
      expect(stub.seen[3].body).toMatchObject({ response_engine: { type: "retell-llm", llm_id: "llm_new" } });
    } finally {
      stub.stop();
    }
  });

  it("does not keep a failed voice list, and fills provider and language when Retell gives none", async () => {
    let answers = 0;
    const stub = stubServer(() => {
      answers += 1;
      if (answers === 1) return new Response("{}", { status: 500 });
      return Response.json([
        { voice_id: "openai-Nova", voice_name: "Nova", provider: "openai", gender: "female" },
        { voice_id: "custom-Zed", voice_name: "Zed", gender: "male", accent: "British" },
        { voice_name: "No id" },
      ]);
    });
    try {
      const retell = adapter(stub.base, fetch);
      await expect(retell.listVoices()).rejects.toBeInstanceOf(VoiceUnavailableError);
      const voices = await retell.listVoices();
      expect(voices).toEqual([
        { voice_id: "openai-Nova", name: "Nova", provider: "openai", language: "en-US", gender: "female" },
        { voice_id: "custom-Zed", name: "Zed", provider: "retell", language: "British", gender: "male" },
      ]);
      await retell.listVoices();
      expect(answers).toBe(2);
    } finally {
      stub.stop();
    }
  });

  it("finds an earlier placement by metadata.call_id, through the numbers when the metadata filter finds nothing", async () => {
    const ours = {
      call_id: "call_retell_1",
      call_status: "ongoing",
      metadata: { call_id: "0193cccc-0000-7000-8000-000000000042" },
    };
    const other = { call_id: "call_retell_0", call_status: "ended", metadata: { call_id: "someone-else" } };
    const direct = stubServer(() => Response.json([other, ours]));
    const fallback = stubServer((_request, body) =>
      Response.json("metadata" in (body as { filter_criteria: object }).filter_criteria ? [] : [other, ours]),
    );
    try {
      const expected: CallLookup = { found: true, providerCallId: "call_retell_1", status: "IN_PROGRESS" };
      expect(await adapter(direct.base, fetch).lookupCall(call(), 0)).toEqual(expected);
      expect(direct.seen).toHaveLength(1);
      expect(await adapter(fallback.base, fetch).lookupCall(call(), 0)).toEqual(expected);
      expect(fallback.seen).toHaveLength(2);
    } finally {
      direct.stop();
      fallback.stop();
    }
  });
});

describe("mapRetellCall", () => {
  const document = retellDocument() as {
    components: {
      schemas: Record<string, { enum?: string[]; properties?: Record<string, { enum?: string[] }> }>;
    };
  };
  const reasons = document.components.schemas.DisconnectionReason.enum ?? [];

  /** How each disconnection reason of the document ends a call for us. */
  const EXPECTED: Record<string, CallStatus> = {
    user_hangup: "COMPLETED",
    agent_hangup: "COMPLETED",
    call_transfer: "COMPLETED",
    transfer_bridged: "COMPLETED",
    transfer_cancelled: "COMPLETED",
    inactivity: "COMPLETED",
    max_duration_reached: "COMPLETED",
    voicemail_reached: "VOICEMAIL",
    ivr_reached: "NO_ANSWER",
    dial_busy: "BUSY",
    dial_no_answer: "NO_ANSWER",
    user_declined: "NO_ANSWER",
    dial_failed: "FAILED",
    invalid_destination: "FAILED",
    concurrency_limit_reached: "FAILED",
    no_valid_payment: "FAILED",
    scam_detected: "FAILED",
    marked_as_spam: "FAILED",
    sip_routing_error: "FAILED",
    telephony_provider_permission_denied: "FAILED",
    telephony_provider_unavailable: "FAILED",
    registered_call_timeout: "FAILED",
    error_llm_websocket_open: "FAILED",
    error_llm_websocket_lost_connection: "FAILED",
    error_llm_websocket_runtime: "FAILED",
    error_llm_websocket_corrupt_payload: "FAILED",
    error_no_audio_received: "FAILED",
    error_asr: "FAILED",
    error_retell: "FAILED",
    error_unknown: "FAILED",
    error_user_not_joined: "FAILED",
  };

  it("covers every disconnection_reason of the document", () => {
    expect(reasons.length).toBeGreaterThan(25);
    expect([...reasons].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it("maps each reason of an ended, not_connected or errored call", () => {
    for (const reason of reasons) {
      for (const status of ["ended", "not_connected", "error"]) {
        expect({ status, reason, ours: mapRetellCall(status, reason) }).toEqual({
          status,
          reason,
          ours: EXPECTED[reason],
        });
      }
    }
  });

  it("maps the call statuses without a reason, and in_voicemail", () => {
    expect(document.components.schemas.V2CallBase.properties?.call_status.enum).toEqual([
      "registered",
      "not_connected",
      "ongoing",
      "ended",
      "error",
    ]);
    expect([
      mapRetellCall("registered", null),
      mapRetellCall("ongoing", null),
      mapRetellCall("ended", null),
      mapRetellCall("not_connected", null),
      mapRetellCall("error", null),
      mapRetellCall("error", undefined),
      // The document's example call: registered, yet with a reason (the status wins).
      mapRetellCall("registered", "user_hangup"),
      mapRetellCall("ended", "agent_hangup", true),
      mapRetellCall("ended", "user_hangup", false),
      mapRetellCall("ended", "a_reason_from_the_future"),
      mapRetellCall("error", "a_reason_from_the_future"),
      mapRetellCall("ended", "constructor"),
      mapRetellCall("not_connected", "__proto__"),
    ]).toEqual([
      "RINGING",
      "IN_PROGRESS",
      "COMPLETED",
      "FAILED",
      "FAILED",
      "FAILED",
      "RINGING",
      "VOICEMAIL",
      "COMPLETED",
      "COMPLETED",
      "FAILED",
      "COMPLETED",
      "FAILED",
    ]);
  });
});

describe("x-retell-signature", () => {
  // The Retell SDK's published test vector.
  const body = '{"event":"call_ended"}';
  const key = "test-api-key";
  const timestamp = 1700000000000;
  const digest = "07024cabe7dd8f6d1c6e4a8324ca92c812e6ad4a7ee506c04f7e462e3321823e";
  const retell = new RetellVoice({ apiKey: key, apiBase: "http://127.0.0.1:9", timeoutMs: 1000 });
  const signed = (header: string) => new Headers({ "x-retell-signature": header });

  it("signs like the Retell SDK", () => {
    expect(retellSignature(key, body, timestamp)).toBe(digest);
  });

  it("accepts a genuine webhook within five minutes, either side", () => {
    const headers = signed(`v=${timestamp},d=${digest}`);
    expect(retell.verifyWebhook({ rawBody: body, headers }, timestamp + 60_000)).toBe(true);
    expect(retell.verifyWebhook({ rawBody: body, headers }, timestamp - 60_000)).toBe(true);
    expect(retell.verifyWebhook({ rawBody: body, headers }, timestamp + 5 * 60_000)).toBe(true);
  });

  it("accepts the same signature spelled otherwise: parts in any order, any case, spaces, `;`", () => {
    const now = timestamp + 60_000;
    for (const header of [
      `d=${digest},v=${timestamp}`,
      `V=${timestamp},D=${digest.toUpperCase()}`,
      ` v = ${timestamp} ,  d = ${digest} `,
      `v=${timestamp};d=${digest}`,
    ]) {
      const ok = retell.verifyWebhook({ rawBody: body, headers: signed(header) }, now);
      expect({ header, ok }).toEqual({ header, ok: true });
      const key = retell.webhookReplayKey({ rawBody: body, headers: signed(header) });
      expect({ header, key }).toEqual({ header, key: `retell:v=${timestamp},d=${digest}` });
    }
    // A part given twice with two values is malformed.
    expect(
      retell.webhookReplayKey({ rawBody: body, headers: signed(`v=${timestamp},d=${digest},v=1`) }),
    ).toBeNull();
  });

  it("refuses a changed body, a wrong key, a malformed or missing header and a stale timestamp", () => {
    const now = timestamp + 60_000;
    const headers = signed(`v=${timestamp},d=${digest}`);
    expect(retell.verifyWebhook({ rawBody: '{"event":"call_started"}', headers }, now)).toBe(false);
    const otherKey = new RetellVoice({ apiKey: "other-key", apiBase: "http://127.0.0.1:9", timeoutMs: 1000 });
    expect(otherKey.verifyWebhook({ rawBody: body, headers }, now)).toBe(false);
    for (const malformed of [
      digest,
      `d=${digest}`,
      `v=${timestamp}`,
      `v=abc,d=${digest}`,
      `v=${timestamp},d=zz`,
      "",
    ]) {
      expect(retell.verifyWebhook({ rawBody: body, headers: signed(malformed) }, now)).toBe(false);
    }
    expect(retell.verifyWebhook({ rawBody: body, headers: new Headers() }, now)).toBe(false);
    // A signature for another timestamp does not carry over.
    expect(
      retell.verifyWebhook({ rawBody: body, headers: signed(`v=${timestamp + 1},d=${digest}`) }, now),
    ).toBe(false);
    expect(retell.verifyWebhook({ rawBody: body, headers }, timestamp + 6 * 60_000)).toBe(false);
    expect(retell.verifyWebhook({ rawBody: body, headers }, timestamp - 6 * 60_000)).toBe(false);
  });
});

describe("parseWebhook", () => {
  const retell = adapter("http://127.0.0.1:9");
  const headers = new Headers();
  const START = 1703302407333;

  /** A call object as the document describes it (V2PhoneCallResponse), with our metadata. */
  function retellCall(overrides: Record<string, unknown> = {}) {
    return {
      call_type: "phone_call",
      from_number: "+14155550100",
      to_number: "+14155550123",
      direction: "outbound",
      call_id: EXAMPLE_CALL_ID,
      agent_id: EXAMPLE_ID,
      agent_version: 1,
      call_status: "ended",
      metadata: { call_id: "0193cccc-0000-7000-8000-000000000042", workspace_id: "ws" },
      start_timestamp: START,
      end_timestamp: 1703302428855,
      duration_ms: 21522,
      transcript: "Agent: hi how are you doing?\nUser: Doing pretty well.\n",
      transcript_object: [
        { role: "agent", content: "hi how are you doing?", words: [{ word: "hi", start: 0.7, end: 1.3 }] },
        { role: "user", content: "Doing pretty well.", words: [{ word: "Doing", start: 2.25, end: 2.6 }] },
        { role: "transfer_target", content: "Front desk speaking.", words: [] },
        { role: "agent", content: "Great, see you tomorrow.", words: [] },
      ],
      recording_url: `https://retellai.s3.us-west-2.amazonaws.com/${EXAMPLE_CALL_ID}/recording.wav`,
      disconnection_reason: "user_hangup",
      ...overrides,
    };
  }

  const parse = (payload: unknown) =>
    retell.parseWebhook({
      rawBody: typeof payload === "string" ? payload : JSON.stringify(payload),
      headers,
    });

  it("maps a call_ended call to a final report, field by field", () => {
    expect(parse({ event: "call_ended", call: retellCall() })).toEqual({
      callId: "0193cccc-0000-7000-8000-000000000042",
      providerCallId: EXAMPLE_CALL_ID,
      status: "COMPLETED",
      durationSec: 22,
      transcript: [
        { role: "agent", text: "hi how are you doing?", at: new Date(START + 700).toISOString() },
        { role: "contact", text: "Doing pretty well.", at: new Date(START + 2250).toISOString() },
        { role: "agent", text: "Great, see you tomorrow.", at: new Date(START).toISOString() },
      ],
      recordingUrl: `https://retellai.s3.us-west-2.amazonaws.com/${EXAMPLE_CALL_ID}/recording.wav`,
      endedReason: "user_hangup",
      startedAt: START,
      endedAt: 1703302428855,
    });
  });

  it("adds the analysis of call_analyzed: summary, sentiment and voicemail", () => {
    const analysis = {
      call_summary: "The contact confirmed the appointment.",
      in_voicemail: false,
      user_sentiment: "Positive",
      call_successful: true,
      custom_analysis_data: {},
    };
    expect(parse({ event: "call_analyzed", call: retellCall({ call_analysis: analysis }) })).toMatchObject({
      status: "COMPLETED",
      summary: "The contact confirmed the appointment.",
      sentiment: "positive",
    });
    const sentiments = ["Negative", "Neutral", "Unknown"].map(
      (user_sentiment) =>
        parse({
          event: "call_analyzed",
          call: retellCall({ call_analysis: { ...analysis, user_sentiment } }),
        })?.sentiment,
    );
    expect(sentiments).toEqual(["negative", "neutral", null]);
    const voicemail = parse({
      event: "call_analyzed",
      call: retellCall({
        disconnection_reason: "agent_hangup",
        call_analysis: { ...analysis, in_voicemail: true, call_summary: "Left a voicemail." },
      }),
    });
    expect(voicemail).toMatchObject({
      status: "VOICEMAIL",
      endedReason: "agent_hangup",
      summary: "Left a voicemail.",
    });
  });

  it("maps a call that never connected, and computes the duration from the timestamps", () => {
    const busy = parse({
      event: "call_ended",
      call: retellCall({
        call_status: "not_connected",
        disconnection_reason: "dial_busy",
        duration_ms: undefined,
        end_timestamp: START + 4_400,
        transcript_object: [],
        recording_url: undefined,
      }),
    });
    expect(busy).toEqual({
      callId: "0193cccc-0000-7000-8000-000000000042",
      providerCallId: EXAMPLE_CALL_ID,
      status: "BUSY",
      durationSec: 4,
      transcript: [],
      endedReason: "dial_busy",
      startedAt: START,
      endedAt: START + 4_400,
    });
    // A call_ended whose status still reads ongoing is over all the same.
    expect(parse({ event: "call_ended", call: retellCall({ call_status: "ongoing" }) })?.status).toBe(
      "COMPLETED",
    );
  });

  it("reports call_started as IN_PROGRESS", () => {
    const started = retellCall({
      call_status: "ongoing",
      transcript_object: undefined,
      disconnection_reason: undefined,
    });
    expect(parse({ event: "call_started", call: started })).toEqual({
      callId: "0193cccc-0000-7000-8000-000000000042",
      providerCallId: EXAMPLE_CALL_ID,
      status: "IN_PROGRESS",
      startedAt: START,
    });
  });

  it("answers null, never throwing, for anything else", () => {
    for (const garbage of [
      "",
      "not json",
      "null",
      "[]",
      "42",
      { event: "call_ended" },
      { event: "call_ended", call: "x" },
      { event: "transcript_updated", call: retellCall() },
      { event: "chat_ended", chat: {} },
      { call: retellCall() },
      { event: "call_ended", call: { call_status: "ended" } },
    ]) {
      expect({ garbage, report: parse(garbage) }).toEqual({ garbage, report: null });
    }
    expect(
      parse({
        event: "call_ended",
        call: { call_id: "c1", transcript_object: [null, 5, { role: "agent" }] },
      }),
    ).toEqual({
      providerCallId: "c1",
      status: "COMPLETED",
      transcript: [{ role: "agent", text: "", at: expect.any(String) }],
    });
    expect(
      parse({
        event: "call_analyzed",
        call: {
          call_id: "c2",
          disconnection_reason: 7,
          recording_url: 5,
          call_analysis: "odd",
          metadata: "x",
        },
      }),
    ).toEqual({ providerCallId: "c2", status: "COMPLETED", endedReason: null, recordingUrl: null });
  });

  it("parses the signed body a genuine webhook carries", () => {
    const rawBody = JSON.stringify({ event: "call_ended", call: retellCall() });
    const now = Date.now();
    const signedHeaders = new Headers({
      "x-retell-signature": `v=${now},d=${retellSignature(API_KEY, rawBody, now)}`,
    });
    expect(retell.verifyWebhook({ rawBody, headers: signedHeaders }, now)).toBe(true);
    expect(retell.parseWebhook({ rawBody, headers: signedHeaders })?.status).toBe("COMPLETED");
  });
});
