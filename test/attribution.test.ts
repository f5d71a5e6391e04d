import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { answerAfterOutsideWrite, outsideConnection } from "./support/database";
import { eventLog } from "./support/event-log";
import { startTestServer, type TestServer } from "./support/server";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;
let s: TestServer;
let ana: Json;
let offer: Json;
let publicId: string;

const log = eventLog(() => s);
beforeAll(async () => {
  s = await startTestServer({ publicUrl: "https://go.example.com" });
  await log.watch();
  ana = (await s.api("POST", "/v1/contacts", { phone_number: "+15125550111", email: "ana@example.com" })).body
    .contact;
  offer = (
    await s.api("POST", "/v1/offers", {
      name: "Spring sale",
      destination_url: "https://shop.example.com/spring?utm_source=sms&x=a%20b#top",
      value: 49,
      currency: "usd",
    })
  ).body.offer;
  publicId = (await s.api("GET", "/v1/settings")).body.settings.public_id;
});
afterAll(async () => await s.stop());

const query = async <T>(text: string, ...params: (string | number)[]): Promise<T[]> => {
  const db = outsideConnection(s);
  try {
    return await db.all<T>(text, ...params);
  } finally {
    await db.close();
  }
};
const follow = (code: string, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/r/${code}`, { redirect: "manual", headers });
const codeOf = (trackingUrl: string) => trackingUrl.split("/r/")[1];

/** Another connection to the server's database (another process's), waiting its turn on SQLite. */
async function write(text: string, ...params: (string | number)[]) {
  const db = outsideConnection(s);
  try {
    await db.run(text, ...params);
  } finally {
    await db.close();
  }
}

/** A per-recipient link as a campaign message carries it (written by the dispatcher in production). */
async function recipientLink(code: string, contactId: string, campaignId: string, messageId: string) {
  await write(
    "INSERT INTO tracked_links (code, workspace_id, offer_id, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
    code,
    s.workspaceId,
    offer.id,
    contactId,
    campaignId,
    messageId,
    Date.now(),
  );
}

describe("/v1/offers", () => {
  it("creates an offer with its tracking_url under PUBLIC_URL", () => {
    // A copy: bun's toMatchObject writes its asymmetric matchers into the object it checks.
    expect({ ...offer }).toMatchObject({
      name: "Spring sale",
      value: 49,
      currency: "USD",
      status: "active",
      tracking_url: expect.stringMatching(/^https:\/\/go\.example\.com\/r\/[0-9A-Za-z]{8}$/),
    });
  });

  it("lists, gets, updates and deletes", async () => {
    const made = (
      await s.api("POST", "/v1/offers", { name: "Tmp", destination_url: "http://10.0.0.5/landing" })
    ).body.offer;
    expect((await s.api("GET", `/v1/offers/${made.id}`)).body.offer).toEqual(made);
    const list = await s.api("GET", "/v1/offers?status=active");
    expect(list.body.offers.map((o: Json) => o.id)).toContain(made.id);
    // `q`: the name contains it, case-insensitive.
    const named = await s.api("GET", "/v1/offers?q=tM");
    expect(named.body.offers.map((o: Json) => o.name)).toEqual(["Tmp"]);
    expect((await s.api("GET", "/v1/offers?q=_")).body.total).toBe(0);
    const patched = await s.api("PATCH", `/v1/offers/${made.id}`, { status: "paused", name: "Tmp 2" });
    expect(patched.body.offer).toMatchObject({
      status: "paused",
      name: "Tmp 2",
      tracking_url: made.tracking_url,
    });
    expect((await s.api("DELETE", `/v1/offers/${made.id}`)).body).toEqual({ ok: true, deleted: true });
    expect((await s.api("GET", `/v1/offers/${made.id}`)).status).toBe(404);
    expect((await follow(codeOf(made.tracking_url))).status).toBe(404);
  });

  const bad: [string, Json, string][] = [
    [
      "a javascript: URL",
      { name: "x", destination_url: "javascript:alert(1)" },
      "destination_url must be an http or https URL",
    ],
    [
      "an ftp URL",
      { name: "x", destination_url: "ftp://example.com/" },
      "destination_url must be an http or https URL",
    ],
    [
      "a metadata address",
      { name: "x", destination_url: "http://169.254.169.254/latest" },
      "destination_url must not point to a link-local or cloud metadata address",
    ],
    [
      "a metadata host",
      { name: "x", destination_url: "http://metadata.google.internal/" },
      "destination_url must not point to a link-local or cloud metadata address",
    ],
    [
      "an IPv6 link-local address",
      { name: "x", destination_url: "http://[fe80::1]/" },
      "destination_url must not point to a link-local or cloud metadata address",
    ],
    ["not a URL", { name: "x", destination_url: "shop" }, "destination_url must be a valid URL"],
    ...(
      [
        ["CR/LF", "https://example.com/a\r\nSet-Cookie: x=1"],
        ["a line feed", "https://example.com/a\nb"],
        ["a tab", "https://example.com/a\tb"],
        ["a space inside", "https://example.com/a b"],
        ["a leading space", " https://example.com/"],
        ["a trailing space", "https://example.com/ "],
        ["a DEL", "https://example.com/\u007f"],
        ["a C1 control", "https://example.com/\u0085"],
        ["a no-break space", "https://example.com/\u00a0x"],
      ] as const
    ).map(([what, url]): [string, Json, string] => [
      `a destination_url with ${what}`,
      { name: "x", destination_url: url },
      "destination_url must be a valid URL",
    ]),
    [
      // Refused by the front door, as any text with NUL (no database keeps it).
      "a destination_url with a NUL",
      { name: "x", destination_url: "https://example.com/\u0000" },
      "destination_url must not contain NUL characters (\\u0000)",
    ],
    [
      "credentials",
      { name: "x", destination_url: "https://u:p@example.com/" },
      "destination_url must not contain credentials",
    ],
    ["no name", { destination_url: "https://example.com/" }, "name is required"],
    [
      "a negative value",
      { name: "x", destination_url: "https://example.com/", value: -5 },
      "value must be between 0 and 1000000000",
    ],
    [
      "a bad currency",
      { name: "x", destination_url: "https://example.com/", currency: "1$" },
      "currency must be a three-letter currency code (ISO 4217)",
    ],
    [
      "a bad status",
      { name: "x", destination_url: "https://example.com/", status: "live" },
      "status must be one of active, paused",
    ],
  ];
  for (const [what, body, error] of bad) {
    it(`answers 422 for ${what}, writing nothing`, async () => {
      const before = (await query<{ n: number }>("SELECT count(*) AS n FROM offers"))[0].n;
      const r = await s.api("POST", "/v1/offers", body);
      expect(r.status).toBe(422);
      expect(r.body.error).toBe(error);
      expect((await query<{ n: number }>("SELECT count(*) AS n FROM offers"))[0].n).toBe(before);
    });
  }

  it("answers 422 for a destination_url with control characters or spaces on update, changing nothing", async () => {
    const made = (
      await s.api("POST", "/v1/offers", { name: "Kept", destination_url: "https://example.com/k" })
    ).body.offer;
    for (const url of [
      "https://example.com/k\r\nLocation: https://evil.example/",
      "https://example.com/k x",
    ]) {
      const r = await s.api("PATCH", `/v1/offers/${made.id}`, { destination_url: url });
      expect({ url, status: r.status, error: r.body.error }).toEqual({
        url,
        status: 422,
        error: "destination_url must be a valid URL",
      });
    }
    expect((await s.api("GET", `/v1/offers/${made.id}`)).body.offer.destination_url).toBe(
      "https://example.com/k",
    );
  });

  it("keeps offers per workspace", async () => {
    const other = await s.newWorkspace("Other");
    expect((await s.api("GET", `/v1/offers/${offer.id}`, undefined, { key: other.key })).status).toBe(404);
    expect((await s.api("PATCH", `/v1/offers/${offer.id}`, { name: "x" }, { key: other.key })).status).toBe(
      404,
    );
  });
});

describe("GET /r/{code}", () => {
  it("records a click and redirects with vcx appended, keeping the destination's query and fragment", async () => {
    const r = await follow(codeOf(offer.tracking_url));
    expect(r.status).toBe(302);
    const location = r.headers.get("location") as string;
    expect(location).toMatch(
      /^https:\/\/shop\.example\.com\/spring\?utm_source=sms&x=a%20b&vcx=[0-9a-f-]{36}#top$/,
    );
    const vcx = new URL(location).searchParams.get("vcx");
    const rows = await query<Json>("SELECT * FROM clicks WHERE id = ?", vcx as string);
    expect(rows[0]).toMatchObject({ offer_id: offer.id, contact_id: null, workspace_id: s.workspaceId });
    expect((await log.of("link.clicked")).map((e) => e.data.click_id)).toContain(vcx);
  });

  it("replaces a vcx of the destination's own, which the landing page would read first", async () => {
    const made = (
      await s.api("POST", "/v1/offers", {
        name: "Own vcx",
        destination_url: "https://v.example.com/p?vcx=old&q=a%20b&vcx=older#f",
      })
    ).body.offer;
    const location = (await follow(codeOf(made.tracking_url))).headers.get("location") as string;
    expect(location).toMatch(/^https:\/\/v\.example\.com\/p\?q=a%20b&vcx=[0-9a-f-]{36}#f$/);
    expect(new URL(location).searchParams.getAll("vcx")).toHaveLength(1);
  });

  it("never answers 500 for a stored destination a header cannot carry: it is percent-encoded", async () => {
    const made = (
      await s.api("POST", "/v1/offers", { name: "Stored", destination_url: "https://example.com/s" })
    ).body.offer;
    const cases: [string, string, RegExp][] = [
      [
        "CR/LF",
        "https://example.com/a\r\nSet-Cookie: x=1",
        /^https:\/\/example\.com\/a%0D%0ASet-Cookie:%20x=1\?vcx=/,
      ],
      ["a tab", "https://example.com/a\tb", /^https:\/\/example\.com\/a%09b\?vcx=/],
      [
        "non-ASCII",
        "https://example.com/日本?q=é",
        /^https:\/\/example\.com\/%E6%97%A5%E6%9C%AC\?q=%C3%A9&vcx=/,
      ],
    ];
    for (const [what, stored, expected] of cases) {
      // Written as a database from before the check could hold it.
      await write("UPDATE offers SET destination_url = ? WHERE id = ?", stored, made.id);
      const r = await answerAfterOutsideWrite(
        s,
        () => follow(codeOf(made.tracking_url)),
        (answer) => expected.test(answer.headers.get("location") ?? ""),
      );
      expect({ what, status: r.status, location: r.headers.get("location") }).toEqual({
        what,
        status: 302,
        location: expect.stringMatching(expected),
      });
      const head = await fetch(`${s.url}/r/${codeOf(made.tracking_url)}`, {
        method: "HEAD",
        redirect: "manual",
      });
      expect({ what, status: head.status }).toEqual({ what, status: 302 });
    }
  });

  it("answers HEAD with the destination and records no click (link checkers, previews)", async () => {
    const count = async () =>
      (await query<{ n: number }>("SELECT count(*) AS n FROM clicks WHERE offer_id = ?", offer.id))[0].n;
    const before = await count();
    const events = (await log.of("link.clicked")).length;
    const r = await fetch(`${s.url}/r/${codeOf(offer.tracking_url)}`, { method: "HEAD", redirect: "manual" });
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe(offer.destination_url);
    expect(await count()).toBe(before);
    expect(await log.of("link.clicked")).toHaveLength(events);
    expect((await fetch(`${s.url}/r/ZZZZZZZZ`, { method: "HEAD", redirect: "manual" })).status).toBe(404);
  });

  it("answers a 404 page for an unknown code, a malformed one and a paused offer, never a redirect", async () => {
    const paused = (
      await s.api("POST", "/v1/offers", {
        name: "P",
        destination_url: "https://example.com/p",
        status: "paused",
      })
    ).body.offer;
    for (const code of ["ZZZZZZZZ", "..%2F..%2Fetc", "a", codeOf(paused.tracking_url)]) {
      const r = await follow(code);
      expect(r.status).toBe(404);
      expect(r.headers.get("location")).toBeNull();
      expect(r.headers.get("content-type")).toContain("text/html");
    }
    expect(
      (await query<{ n: number }>("SELECT count(*) AS n FROM clicks WHERE offer_id = ?", paused.id))[0].n,
    ).toBe(0);
  });

  it("follows an offer's changes at once, though links are remembered between clicks", async () => {
    const made = (
      await s.api("POST", "/v1/offers", { name: "Fresh", destination_url: "https://example.com/a" })
    ).body.offer;
    const code = codeOf(made.tracking_url);
    const locationOf = async () => {
      const r = await follow(code);
      return r.status === 302 ? new URL(r.headers.get("location") as string).pathname : r.status;
    };
    expect(await locationOf()).toBe("/a");
    expect(await locationOf()).toBe("/a");
    // Changed through the API (this process).
    await s.api("PATCH", `/v1/offers/${made.id}`, { destination_url: "https://example.com/b" });
    expect(await locationOf()).toBe("/b");
    await s.api("PATCH", `/v1/offers/${made.id}`, { status: "paused" });
    expect(await locationOf()).toBe(404);
    await s.api("PATCH", `/v1/offers/${made.id}`, { status: "active" });
    expect(await locationOf()).toBe("/b");
    // Changed by another connection (a second process on the same file).
    await write("UPDATE offers SET status = 'paused' WHERE id = ?", made.id);
    expect(await answerAfterOutsideWrite(s, locationOf, (l) => l === 404)).toBe(404);
    await write(
      "UPDATE offers SET status = 'active', destination_url = 'https://example.com/c' WHERE id = ?",
      made.id,
    );
    expect(await answerAfterOutsideWrite(s, locationOf, (l) => l === "/c")).toBe("/c");
    await s.api("DELETE", `/v1/offers/${made.id}`);
    expect(await locationOf()).toBe(404);
  });

  it("is rate limited per address", async () => {
    const limited = await startTestServer({ rateLimitRps: 1, rateLimitBurst: 2 });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await fetch(`${limited.url}/r/ZZZZZZZZ`, { redirect: "manual" })).status);
      expect(statuses).toEqual([404, 404, 429, 429]);
      const refused = await fetch(`${limited.url}/t/collect`, { method: "POST", body: "{}" });
      expect(refused.status).toBe(429);
      // Readable by the page that sent it (cross-origin), as the report's 204 is.
      expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    } finally {
      await limited.stop();
    }
  });
});

describe("the tracking script and its reports", () => {
  it("serves /t.js small (≤ 3 KB gzipped), gzipped on request, cacheable", async () => {
    const plain = await fetch(`${s.url}/t.js?w=${publicId}`, { headers: { "accept-encoding": "identity" } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-type")).toContain("javascript");
    const text = await plain.text();
    expect(text).toContain("/t/collect");
    const gzipped = Bun.gzipSync(new TextEncoder().encode(text));
    expect(gzipped.length).toBeLessThanOrEqual(3072);
    const etag = plain.headers.get("etag") as string;
    expect((await fetch(`${s.url}/t.js`, { headers: { "if-none-match": etag } })).status).toBe(304);
  });

  it("answers OPTIONS and every report with 204 and CORS, whatever it carries", async () => {
    const pre = await fetch(`${s.url}/t/collect`, {
      method: "OPTIONS",
      headers: { origin: "https://shop.example.com" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    for (const body of [
      "",
      "not json",
      "[]",
      '{"vid":"x"}',
      JSON.stringify({ vid: crypto.randomUUID(), vcx: crypto.randomUUID() }),
      "x".repeat(8 * 1024),
    ]) {
      for (const path of ["/t/collect", "/t/identify"]) {
        const r = await fetch(`${s.url}${path}`, {
          method: "POST",
          body,
          headers: { "content-type": "text/plain" },
        });
        expect(r.status).toBe(204);
        expect(r.headers.get("access-control-allow-origin")).toBe("*");
        expect(await r.text()).toBe("");
      }
    }
    expect((await query<{ n: number }>("SELECT count(*) AS n FROM visitors"))[0].n).toBe(0);
  });

  it("answers 413 with CORS for a report over 8 KiB, declared or chunked, and records nothing", async () => {
    const big = JSON.stringify({
      vid: crypto.randomUUID(),
      vcx: crypto.randomUUID(),
      pad: "x".repeat(8 * 1024),
    });
    for (const path of ["/t/collect", "/t/identify"]) {
      for (const chunked of [false, true]) {
        const bytes = new TextEncoder().encode(big);
        const body = chunked
          ? new ReadableStream({
              start(controller) {
                for (let i = 0; i < bytes.length; i += 1000) controller.enqueue(bytes.subarray(i, i + 1000));
                controller.close();
              },
            })
          : big;
        const r = await fetch(`${s.url}${path}`, {
          method: "POST",
          body,
          headers: { "content-type": "text/plain" },
          duplex: "half",
        } as RequestInit);
        expect({ path, chunked, status: r.status }).toEqual({ path, chunked, status: 413 });
        expect(r.headers.get("access-control-allow-origin")).toBe("*");
        expect((await r.json()).error).toBe("Request body is too large (max 8192 bytes)");
      }
    }
    expect((await query<{ n: number }>("SELECT count(*) AS n FROM visitors"))[0].n).toBe(0);
  });
});

describe("attribution", () => {
  it("a recipient link's click carries contact, campaign and message; vcx resolves the contact and is credited", async () => {
    const campaignId = crypto.randomUUID();
    const messageId = crypto.randomUUID();
    await recipientLink("AnaLink001", ana.id, campaignId, messageId);
    const r = await follow("AnaLink001");
    const vcx = new URL(r.headers.get("location") as string).searchParams.get("vcx") as string;
    const conv = await s.api("POST", "/v1/conversion", {
      txn: "a-1",
      value: 20,
      vcx,
      email: "nobody@example.com",
    });
    expect(conv.body).toEqual({ conversion: { recorded: true, duplicate: false, contact_id: ana.id } });
    const row = (await s.api("GET", `/v1/conversions?txn=a-1&contact_id=${ana.id}`)).body.conversions[0];
    expect(row).toMatchObject({
      click_id: vcx,
      campaign_id: campaignId,
      offer_id: offer.id,
      message_id: messageId,
    });
    // A later conversion by email is credited to the same last click.
    const later = await s.api("POST", "/v1/conversion", { txn: "a-2", email: "ANA@example.com" });
    expect(later.body.conversion.contact_id).toBe(ana.id);
    const row2 = (await s.api("GET", `/v1/conversions?contact_id=${ana.id}&limit=1`)).body.conversions[0];
    expect(row2).toMatchObject({ txn: "a-2", click_id: vcx, campaign_id: campaignId });
  });

  it("a landing reported with vcx ties vid to the clicked contact; identify ties a generic link's visitor", async () => {
    await recipientLink("AnaLink002", ana.id, crypto.randomUUID(), crypto.randomUUID());
    const vcx = new URL((await follow("AnaLink002")).headers.get("location") as string).searchParams.get(
      "vcx",
    );
    const vid = crypto.randomUUID();
    const collect = await fetch(`${s.url}/t/collect`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ vid, vcx, url: "https://shop.example.com/spring", w: publicId }),
    });
    expect(collect.status).toBe(204);
    const conv = await s.api("POST", "/v1/conversion", { txn: "v-1", vid });
    expect(conv.body.conversion.contact_id).toBe(ana.id);

    // A generic link knows no contact; identify ties the visitor, and the conversion gets the click.
    const ben = (
      await s.api("POST", "/v1/contacts", { phone_number: "+15125550112", external_id: "crm-ben" })
    ).body.contact;
    const genericVcx = new URL(
      (await follow(codeOf(offer.tracking_url))).headers.get("location") as string,
    ).searchParams.get("vcx");
    const benVid = crypto.randomUUID();
    const post = (path: string, body: Json) =>
      fetch(`${s.url}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        headers: { "content-type": "text/plain" },
      });
    await post("/t/collect", { vid: benVid, vcx: genericVcx, w: publicId });
    expect((await s.api("POST", "/v1/conversion", { txn: "v-2", vid: benVid })).status).toBe(422);
    await post("/t/identify", { vid: benVid, w: "ws_wrongworkspace00000", external_id: "crm-ben" });
    expect((await s.api("POST", "/v1/conversion", { txn: "v-2", vid: benVid })).status).toBe(422);
    await post("/t/identify", { vid: benVid, w: publicId, external_id: "crm-ben" });
    const conv2 = await s.api("POST", "/v1/conversion", { txn: "v-2", vid: benVid });
    expect(conv2.body.conversion.contact_id).toBe(ben.id);
    const row = (await s.api("GET", `/v1/conversions?contact_id=${ben.id}`)).body.conversions[0];
    expect(row).toMatchObject({ click_id: genericVcx, offer_id: offer.id, campaign_id: null });
  });

  it("credits nothing for a click older than 30 days", async () => {
    const eve = (await s.api("POST", "/v1/contacts", { phone_number: "+15125550113" })).body.contact;
    await recipientLink("EveLink001", eve.id, crypto.randomUUID(), crypto.randomUUID());
    const vcx = new URL((await follow("EveLink001")).headers.get("location") as string).searchParams.get(
      "vcx",
    ) as string;
    await write("UPDATE clicks SET created_at = ? WHERE id = ?", Date.now() - 31 * 86_400_000, vcx);
    const conv = await s.api("POST", "/v1/conversion", { txn: "old-1", vcx });
    expect(conv.body.conversion.contact_id).toBe(eve.id);
    const row = (await s.api("GET", `/v1/conversions?contact_id=${eve.id}`)).body.conversions[0];
    expect(row).toMatchObject({ click_id: null, campaign_id: null, offer_id: null });
  });

  it("segment rules on clicked and conversion activity match", async () => {
    await s.api("POST", "/v1/contacts", { phone_number: "+15125550114" });
    const names = async (rule: Json) =>
      (await s.api("POST", "/v1/segments/preview", { rules: { all: [rule] } })).body.sample
        .map((c: Json) => c.phone_number)
        .sort();
    expect(await names({ event: "clicked", op: "any_within_days", value: 30 })).toEqual(["+15125550111"]);
    expect(await names({ event: "clicked", op: "any_within_days", value: 60 })).toEqual([
      "+15125550111",
      "+15125550113",
    ]);
    expect(await names({ event: "conversion", op: "any_within_days", value: 1 })).toEqual([
      "+15125550111",
      "+15125550112",
      "+15125550113",
    ]);
    expect(await names({ event: "conversion", op: "none_within_days", value: 1 })).toEqual(["+15125550114"]);
  });
});
