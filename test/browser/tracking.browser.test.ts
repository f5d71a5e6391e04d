import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";
import { outsideConnection } from "../support/database";
import { startTestServer, type TestServer } from "../support/server";

/** Debian's chromium (playwright-core downloads nothing); scripts/test.ts skips this file without it. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;
let s: TestServer;
let browser: Browser;
let landing: ReturnType<typeof Bun.serve>;
let publicId: string;

beforeAll(async () => {
  if (!available) return;
  s = await startTestServer();
  publicId = (await s.api("GET", "/v1/settings")).body.settings.public_id;
  // A landing page on another origin embedding the script, optionally with its storage blocked.
  landing = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const blocked = new URL(request.url).pathname === "/blocked";
      const block = blocked
        ? `<script>Object.defineProperty(window,"localStorage",{get(){throw new DOMException("blocked","SecurityError")}});Object.defineProperty(document,"cookie",{get(){throw new DOMException("blocked","SecurityError")},set(){throw new DOMException("blocked","SecurityError")}});</script>`
        : "";
      return new Response(
        `<!doctype html><html><head>${block}<script src="${s.url}/t.js?w=${publicId}"></script></head><body>Landing</body></html>`,
        { headers: { "content-type": "text/html" } },
      );
    },
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});
afterAll(async () => {
  await browser?.close();
  landing?.stop(true);
  await s?.stop();
});

async function campaignClick(phone: string) {
  const contact = (await s.api("POST", "/v1/contacts", { phone_number: phone })).body.contact;
  const offer = (
    await s.api("POST", "/v1/offers", {
      name: "Landing",
      destination_url: `http://127.0.0.1:${landing.port}/`,
    })
  ).body.offer;
  // A recipient link as the campaign dispatcher writes it.
  const db = outsideConnection(s);
  const code = `B${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`;
  const campaignId = crypto.randomUUID();
  await db.run(
    "INSERT INTO tracked_links (code, workspace_id, offer_id, contact_id, campaign_id, message_id, number_id, created_at) VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)",
    code,
    s.workspaceId,
    offer.id,
    contact.id,
    campaignId,
    Date.now(),
  );
  await db.close();
  return { contact, offer, code, campaignId };
}

for (const [name, path] of [
  ["with storage", "/"],
  ["with storage blocked", "/blocked"],
] as const) {
  describe.skipIf(!available)(`the tracking script in Chromium, ${name}`, () => {
    it("ties vid to the clicked contact on landing; POST /v1/conversion {vid} is attributed; no page error", async () => {
      const phone = path === "/" ? "+15125550401" : "+15125550402";
      const { contact, offer, code, campaignId } = await campaignClick(phone);
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(String(error)));
      const collected = page.waitForResponse((response) => response.url().endsWith("/t/collect"));
      // The click: the server redirects to the landing with vcx (path / or /blocked).
      const target = `${s.url}/r/${code}`;
      if (path === "/blocked") {
        const location = (await fetch(target, { redirect: "manual" })).headers.get("location") as string;
        await page.goto(location.replace(/\/\?/, "/blocked?"));
      } else {
        await page.goto(target);
      }
      expect((await collected).status()).toBe(204);
      const vid = (await page.evaluate(() => (window as Json).outreach?.vid)) as string;
      expect(vid).toMatch(/^[0-9a-f-]{36}$/);
      const conv = await s.api("POST", "/v1/conversion", { txn: `browser-${phone}`, value: 12, vid });
      expect(conv.body).toEqual({ conversion: { recorded: true, duplicate: false, contact_id: contact.id } });
      const row = (await s.api("GET", `/v1/conversions?contact_id=${contact.id}`)).body.conversions[0];
      expect(row).toMatchObject({ campaign_id: campaignId, offer_id: offer.id });
      if (path === "/") {
        // The same visitor id comes back on the next page view (localStorage and cookie).
        await page.goto(`http://127.0.0.1:${landing.port}/`);
        expect(await page.evaluate(() => (window as Json).outreach?.vid)).toBe(vid);
      }
      await page.evaluate(() => (window as Json).outreach.identify({ email: 42 }));
      expect(errors).toEqual([]);
      await page.close();
    });
  });
}
