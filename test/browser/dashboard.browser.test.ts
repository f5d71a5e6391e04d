/**
 * The dashboard in headless Chromium (playwright-core with Debian's chromium), as a new user uses
 * it: set up an account from a one-time link, sign in; create an API key, see it once, use it,
 * revoke it; answer an inbound message from the inbox; import a CSV to 100 %; create, preview and
 * launch a campaign and see its stats move; build a three-node flow by dragging and connecting,
 * save, reload and find the same definition in the API; an agent cannot open settings. Each page's
 * screenshot goes to docs/screenshots/ with SCREENSHOTS=1 (else to a temporary folder).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { eventually } from "../support/messaging";
import { startTestServer, type TestServer } from "../support/server";
import { zoneAtLocalHour } from "../support/zones";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
// The README's screenshots are rewritten only on request (SCREENSHOTS=1); an ordinary run writes
// them to a temporary folder, so running the suite leaves the working tree as it was.
const SHOTS =
  process.env.SCREENSHOTS === "1"
    ? join(import.meta.dir, "..", "..", "docs", "screenshots")
    : join(tmpdir(), "outreach-screenshots");

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
type Json = any;
let s: TestServer;
let browser: Browser;
const OURS = "+14155550100";
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  if (!available) return;
  s = await startTestServer({}, { SIMULATED_DELIVERY_MS: "20" });
  await s.api("POST", "/v1/numbers", { number: OURS });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** A user of the bootstrap workspace with a one-time setup link (made with the bootstrap key). */
async function invite(email: string, role: "admin" | "agent") {
  const res = await s.api("POST", "/v1/users", { email, name: email.split("@")[0], role });
  expect(res.status).toBe(200);
  return res.body.setup_url as string;
}

/** Opens the setup link in a fresh browser context, sets a password, and lands signed in. */
async function signedIn(
  email: string,
  role: "admin" | "agent",
): Promise<{ context: BrowserContext; page: Page }> {
  const link = await invite(email, role);
  // bypassCSP: axe-core is injected into the page, which the dashboard's CSP would refuse.
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  const path = new URL(link).pathname + new URL(link).search;
  await page.goto(s.url + path);
  await page.getByLabel("Name").fill(email.split("@")[0]);
  await page.getByLabel(/^Password/).fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  (page as Page & { errors?: string[] }).errors = errors;
  return { context, page };
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

const AXE = readFileSync(join(import.meta.dir, "..", "..", "node_modules", "axe-core", "axe.min.js"), "utf8");

/** axe-core's serious and critical violations on the page as it is, as "rule: elements" lines. */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const result: Json = await page.evaluate(
    async () =>
      await (window as unknown as { axe: { run: (d: Document, o: object) => Promise<unknown> } }).axe.run(
        document,
        {
          resultTypes: ["violations"],
        },
      ),
  );
  return result.violations
    .filter((v: Json) => v.impact === "serious" || v.impact === "critical")
    .map((v: Json) => `${v.id}: ${v.nodes.map((n: Json) => n.target.join(" ")).join(", ")}`);
}

describe.skipIf(!available)("the dashboard in Chromium", () => {
  it("signs out and back in with e-mail and password; a wrong password shows the API's answer", async () => {
    const { context, page } = await signedIn("ada@example.com", "admin");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("form", { name: "Sign in" }).waitFor();
    await shot(page, "sign-in");
    await page.getByLabel("E-mail").fill("ada@example.com");
    await page.getByLabel("Password").fill("wrong password!");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe("Invalid email or password");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    await context.close();
  });

  it("sets the daily budgets in Settings: a number, or blank for none", async () => {
    const { context, page } = await signedIn("hedy@example.com", "admin");
    await page.getByRole("link", { name: "Settings" }).click();
    const workspace = page.getByRole("region", { name: "Workspace" });
    const oneOff = workspace.getByLabel("One-off sends per day (blank: no limit)");
    expect(await oneOff.inputValue()).toBe("5000");
    await oneOff.fill("250");
    await workspace.getByLabel("Numbers ordered per day (blank: no limit)").fill("");
    await workspace.getByRole("button", { name: "Save" }).click();
    await workspace.getByRole("status").waitFor();
    const saved = (await s.api("GET", "/v1/settings")).body.settings;
    expect({ one_off: saved.one_off_daily_limit, orders: saved.number_orders_daily_limit }).toEqual({
      one_off: 250,
      orders: null,
    });
    await s.api("PATCH", "/v1/settings", { one_off_daily_limit: 5000, number_orders_daily_limit: 50 });
    await context.close();
  });

  it("creates an API key shown once, which works until it is revoked", async () => {
    const { context, page } = await signedIn("grace@example.com", "admin");
    await page.getByRole("link", { name: "Settings" }).click();
    const keys = page.getByRole("region", { name: "API keys" });
    await keys.getByLabel("Name").fill("CI key");
    await keys.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent()) ?? "";
    expect(key).toMatch(/^opk_[0-9A-Za-z]{36}$/);
    await shot(page, "settings");
    const me = await s.api("GET", "/v1/me", undefined, { key });
    expect(me.status).toBe(200);
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.getByTestId("new-key").count()).toBe(0);
    // Revoking asks first.
    page.once("dialog", (dialog) => void dialog.accept());
    await keys.getByRole("button", { name: "Revoke CI key" }).click();
    await keys.getByText("revoked").first().waitFor();
    expect((await s.api("GET", "/v1/me", undefined, { key })).status).toBe(401);
    await context.close();
  });

  it("link domains in Settings: a domain added through the API is listed, and its Delete is destructive and asks first", async () => {
    const { context, page } = await signedIn("annie@example.com", "admin");
    const added = await s.api("POST", "/v1/link-domains", { domain: "go.styled-apart.example" });
    expect(added.status).toBe(200);
    await page.getByRole("link", { name: "Settings" }).click();
    const domains = page.getByRole("region", { name: "Link domains" });
    const del = domains.getByRole("button", { name: "Delete go.styled-apart.example" });
    await del.waitFor();
    // Destructive actions are styled apart, as the key's Revoke is.
    expect(await del.getAttribute("class")).toContain("danger");
    expect(
      await page
        .getByRole("region", { name: "API keys" })
        .getByRole("button", { name: /^Revoke / })
        .first()
        .getAttribute("class"),
    ).toContain("danger");
    page.once("dialog", (dialog) => void dialog.accept());
    await del.click();
    await del.waitFor({ state: "detached" });
    const left = await s.api("GET", "/v1/link-domains");
    expect(left.body.link_domains.map((d: Json) => d.domain)).not.toContain("go.styled-apart.example");
    await context.close();
  });

  it("answers an inbound message from the inbox", async () => {
    const { context, page } = await signedIn("linus@example.com", "admin");
    const from = "+14155550177";
    await s.api("POST", "/v1/contacts", { phone_number: from, first_name: "Rita <b>bold</b>" });
    await s.api("POST", "/v1/sandbox/inbound", { from, to: OURS, body: "Is my order <i>ready</i>?" });
    await page.getByRole("link", { name: "Inbox" }).click();
    await page.getByRole("link", { name: /Rita <b>bold<\/b>/ }).click();
    // Names and bodies are text: the markup shows as typed, and no <b> or <i> element exists.
    await page.locator(".messages").getByText("Is my order <i>ready</i>?").waitFor();
    expect(await page.locator(".messages b, .messages i, .thread-list b").count()).toBe(0);
    await page.getByRole("form", { name: "Reply" }).getByRole("textbox").fill("Yes, pick it up any time.");
    await page.getByRole("button", { name: "Send reply" }).click();
    await page.locator(".messages").getByText("Yes, pick it up any time.").waitFor();
    await shot(page, "inbox");
    const outbox = await eventually(
      async () => (await s.api("GET", "/v1/sandbox/outbox")).body.sends as Json[],
      (sends) => sends.some((x) => x.body === "Yes, pick it up any time."),
    );
    expect(outbox.find((x) => x.body === "Yes, pick it up any time.")?.to).toBe(from);
    await context.close();
  });

  it("inbox: rows show the last message and unread state; j/k, r and e; notes, assign to me, opted-out state", async () => {
    const { context, page } = await signedIn("katherine@example.com", "admin");
    const [chatty, quiet] = ["+14155550181", "+14155550182"];
    await s.api("POST", "/v1/contacts", { phone_number: chatty, first_name: "Noor" });
    await s.api("POST", "/v1/contacts", { phone_number: quiet, first_name: "Olu" });
    await s.api("POST", "/v1/sandbox/inbound", { from: quiet, to: OURS, body: "STOP" });
    await s.api("POST", "/v1/sandbox/inbound", {
      from: chatty,
      to: OURS,
      body: "Do you open on Sunday?\nAsking for a friend",
    });
    await page.getByRole("link", { name: "Inbox" }).click();
    const row = page.locator(".thread-list li", { hasText: "Noor" });
    await row.getByText("Do you open on Sunday?").waitFor();
    expect(await row.getByText("Asking for a friend").count()).toBe(0);
    expect(await row.getByText("1 new").count()).toBe(1);
    // j opens the newest thread; its unread mark goes once opened.
    await page.keyboard.press("j");
    await page.locator(".thread-view h2", { hasText: "Noor" }).waitFor();
    await eventually(
      async () => row.getByText("1 new").count(),
      (n) => n === 0,
    );
    // A private note: shown in the thread, never sent.
    await page.getByRole("tab", { name: "Private note" }).click();
    await page.getByLabel("Note for the team (never sent)").fill("Regular on Saturdays");
    await page.getByRole("button", { name: "Add note" }).click();
    await page.locator(".message.note", { hasText: "Regular on Saturdays" }).waitFor();
    const sends = (await s.api("GET", "/v1/sandbox/outbox")).body.sends as Json[];
    expect(sends.some((x) => x.body === "Regular on Saturdays")).toBe(false);
    await page.getByRole("button", { name: "Assign to me" }).click();
    await page.getByRole("button", { name: "Assign to me" }).waitFor({ state: "detached" });
    expect(
      await page.getByRole("combobox", { name: "Assigned to" }).locator("option:checked").textContent(),
    ).toBe("katherine (me)");
    await page.getByRole("tab", { name: "Reply" }).click();
    // e closes the thread; r puts the cursor in the reply.
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("e");
    await page.getByRole("button", { name: "Reopen" }).waitFor();
    await page.keyboard.press("r");
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA");
    await page.keyboard.press("Escape");
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("k");
    await page.keyboard.press("j");
    await page.locator(".thread-view h2", { hasText: "Olu" }).waitFor();
    await page.getByText("This contact opted out.").waitFor();
    expect(await page.getByRole("button", { name: "Send reply" }).isDisabled()).toBe(true);
    await shot(page, "inbox-thread");
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it("imports a CSV with the progress reaching 100 %", async () => {
    const { context, page } = await signedIn("ken@example.com", "admin");
    await page.getByRole("link", { name: "Contacts" }).click();
    const rows = ["phone_number,first_name"];
    for (let i = 0; i < 2000; i++) rows.push(`+1415${String(6000000 + i)},P${i}`);
    await page.getByLabel("CSV file").setInputFiles({
      name: "contacts.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(rows.join("\n")),
    });
    await page.getByTestId("import-percent").filter({ hasText: "100 %" }).waitFor();
    await page.getByText(/Created 2000/).waitFor();
    await shot(page, "contacts");
    expect((await s.api("GET", "/v1/contacts?limit=1")).body.total).toBeGreaterThanOrEqual(2000);
    await context.close();
  });

  it("creates, previews and launches a campaign, and its stats move", async () => {
    const { context, page } = await signedIn("dorothy@example.com", "admin");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await s.api("POST", "/v1/contacts", {
        phone_number: `+1415555${String(8100 + i)}`,
        timezone: zoneAtLocalHour(12),
      });
      ids.push(c.body.contact.id);
    }
    const list = (await s.api("POST", "/v1/lists", { name: "Browser list" })).body.list;
    await s.api("POST", `/v1/lists/${list.id}/contacts`, { contact_ids: ids });
    await page.getByRole("link", { name: "Campaigns" }).click();
    await page.getByRole("button", { name: "New campaign" }).click();
    const form = page.getByRole("region", { name: "New campaign" });
    await form.getByLabel("Name", { exact: true }).fill("Browser campaign");
    await form.getByRole("group", { name: "Lists", exact: true }).getByLabel("Browser list").check();
    // The counter follows the text: a curly quote makes it UCS-2.
    await form
      .getByLabel("Message", { exact: true })
      .fill("Hi {{first_name|there}}, it’s on! Reply STOP to opt out.");
    await form.getByText(/UCS-2 · 1 segment/).waitFor();
    await form.getByLabel("Message", { exact: true }).fill("x".repeat(161));
    await form.getByText(/GSM-7 · 2 segments/).waitFor();
    await form.getByLabel("Message", { exact: true }).fill("Hi {{first_name|there}}! Reply STOP to opt out.");
    await shot(page, "campaign-form");
    expect(await accessibilityProblems(page)).toEqual([]);
    await form.getByRole("button", { name: "Create draft" }).click();
    await page.getByTestId("campaign-status").filter({ hasText: "draft" }).waitFor();
    await page.getByRole("button", { name: "Preview" }).click();
    const preview = page.getByRole("region", { name: "Preview" });
    await preview.getByText(/3 recipients/).waitFor();
    // Preview for one contact: found by number, their message as they would get it.
    await preview.getByLabel("Find a contact").fill("4155558101");
    await preview.getByLabel("Preview for").selectOption({ label: "+14155558101" });
    // The audience's rows stay until the contact's preview answers: wait until they are replaced.
    await preview.locator("tbody tr").nth(1).waitFor({ state: "detached" });
    await preview.getByRole("cell", { name: "+14155558101" }).waitFor();
    expect(await preview.getByRole("row").count()).toBe(2);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByRole("button", { name: "Launch", exact: true }).click();
    // Launching asks first, naming the recipient count.
    await page.getByRole("button", { name: "Launch to 3 recipients" }).click();
    await page.getByTestId("stat-delivered").filter({ hasText: "3" }).waitFor({ timeout: 20_000 });
    await page.getByRole("region", { name: "Recipients" }).getByText("delivered").first().waitFor();
    await shot(page, "campaign");
    await context.close();
  });

  it("builds a three-node flow by dragging and connecting, saves it, and the API has the same definition", async () => {
    const { context, page } = await signedIn("margaret@example.com", "admin");
    await page.getByRole("link", { name: "Flows" }).click();
    await page.getByRole("button", { name: "New flow" }).click();
    await page.getByTestId("canvas").waitFor();
    const id = new URL(page.url()).pathname.split("/").pop() as string;
    const canvas = page.getByTestId("canvas");
    const box = await canvas.boundingBox();
    if (!box) throw new Error("no canvas");
    await page
      .getByTestId("palette-send_sms")
      .dragTo(canvas, { targetPosition: { x: box.width / 2, y: box.height / 2 } });
    await page
      .getByTestId("palette-end")
      .dragTo(canvas, { targetPosition: { x: box.width / 2, y: box.height - 60 } });
    await page.getByTestId("node-send_sms").waitFor();
    await page.getByTestId("node-end").waitFor();
    // Connect trigger → send → end by their handles.
    const connect = async (from: string, to: string) => {
      const source = page.locator(`[data-testid="node-${from}"] .react-flow__handle-bottom`).first();
      const target = page.locator(`[data-testid="node-${to}"] .react-flow__handle-top`).first();
      await source.dragTo(target);
    };
    await connect("trigger", "send_sms");
    await connect("send_sms", "end");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
    await shot(page, "flow-editor");
    const saved = (await s.api("GET", `/v1/flows/${id}`)).body.flow.definition;
    expect(saved.nodes.map((n: Json) => n.type).sort()).toEqual(["end", "send_sms", "trigger"]);
    expect(saved.edges).toHaveLength(2);
    for (const node of saved.nodes)
      expect(Object.keys(node).sort()).toEqual(["data", "id", "position", "type"]);
    for (const edge of saved.edges) expect(Object.keys(edge).sort()).toEqual(["id", "source", "target"]);
    await page.reload();
    await page.getByTestId("node-send_sms").waitFor();
    const again = (await s.api("GET", `/v1/flows/${id}`)).body.flow.definition;
    expect(again).toEqual(saved);
    expect(await page.locator(".react-flow__edge").count()).toBe(2);
    await context.close();
  });

  it("flow editor: forms per node, a new step follows the selected one, rename, leaving asks, simulate in words", async () => {
    const { context, page } = await signedIn("frances@example.com", "admin");
    const flow = (
      await s.api("POST", "/v1/flows", {
        name: "Keyword welcome",
        definition: {
          nodes: [{ id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } }],
          edges: [],
        },
      })
    ).body.flow;
    await page.goto(`${s.url}/flows/${flow.id}`);
    await page.locator('.react-flow__node[data-id="t"]').click();
    await page.getByLabel("Starts when").selectOption("inbound_keyword");
    await page.getByLabel(/^Keywords/).fill("JOIN");
    await page.getByTestId("palette-send_sms").click();
    await page.getByLabel("Message").fill("Welcome aboard, {{first_name|friend}}!");
    await page.getByTestId("palette-wait_for_reply").click();
    await page.getByLabel("Wait up to (hours)").fill("12");
    await page.getByText("Unsaved changes").waitFor();
    // Leaving with unsaved changes asks first; dismissing stays.
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("link", { name: "← Flows" }).click();
    expect(new URL(page.url()).pathname).toBe(`/flows/${flow.id}`);
    await page.getByLabel("Flow name").fill("JOIN welcome");
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("status").filter({ hasText: "Renamed" }).waitFor();
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
    const saved = (await s.api("GET", `/v1/flows/${flow.id}`)).body.flow;
    expect(saved.name).toBe("JOIN welcome");
    const byType = Object.fromEntries(saved.definition.nodes.map((n: Json) => [n.type, n]));
    expect(byType.trigger.data).toEqual({ event: "inbound_keyword", keywords: ["JOIN"] });
    expect(byType.send_sms.data).toEqual({ body: "Welcome aboard, {{first_name|friend}}!" });
    expect(byType.wait_for_reply.data).toEqual({ timeout_hours: 12 });
    expect(saved.definition.edges.map((e: Json) => [e.source, e.target])).toEqual([
      ["t", byType.send_sms.id],
      [byType.send_sms.id, byType.wait_for_reply.id],
    ]);
    // Edges carry arrows (drawn again once the saved flow is shown); a wait-for-reply's handles
    // are labelled in words.
    await page.locator(".react-flow__edge path[marker-end]").nth(1).waitFor({ state: "attached" });
    expect(await page.locator(".react-flow__edge path[marker-end]").count()).toBe(2);
    await page.locator('[data-testid="node-wait_for_reply"] .handle-labels').getByText("no reply").waitFor();
    await page.getByRole("button", { name: "Simulate" }).click();
    await page
      .getByRole("list", { name: "Simulation" })
      .getByText(/Send a text — the contact was sent a text/)
      .waitFor();
    await shot(page, "flow-editor-forms");
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it("connects two flow nodes with the keyboard alone, and saves the edge", async () => {
    const { context, page } = await signedIn("niklaus@example.com", "admin");
    const flow = (
      await s.api("POST", "/v1/flows", {
        name: "Keyboard",
        definition: {
          nodes: [
            { id: "t", type: "trigger", position: { x: 0, y: 0 }, data: { event: "manual" } },
            { id: "done", type: "end", position: { x: 0, y: 200 }, data: {} },
          ],
          edges: [],
        },
      })
    ).body.flow;
    await page.goto(`${s.url}/flows/${flow.id}`);
    // A node is focusable: focus it and press Enter to select it.
    await page.locator('.react-flow__node[data-id="t"]').focus();
    await page.keyboard.press("Enter");
    await page.getByLabel("To node").focus();
    await page.keyboard.press("ArrowDown");
    await page.getByLabel("To node").selectOption("done");
    await page.getByRole("button", { name: "Add edge" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Save" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
    const saved = (await s.api("GET", `/v1/flows/${flow.id}`)).body.flow.definition;
    expect(saved.edges.map((e: Json) => [e.source, e.target])).toEqual([["t", "done"]]);
    await context.close();
  });

  it("an agent user cannot open settings, and sees no Settings link", async () => {
    const { context, page } = await signedIn("joan@example.com", "agent");
    expect(await page.getByRole("link", { name: "Settings" }).count()).toBe(0);
    await page.goto(`${s.url}/settings`);
    await page.getByText("Your account cannot open settings.").waitFor();
    const settings = await page.evaluate(async () => (await fetch("/v1/settings")).status);
    expect(settings).toBe(403);
    await context.close();
  });

  it("shows a segment's live count and answers in the agent's test chat", async () => {
    const { context, page } = await signedIn("alan@example.com", "admin");
    await page.getByRole("link", { name: "Lists & segments" }).click();
    const count = (
      await s.api("POST", "/v1/segments/preview", {
        rules: { all: [{ field: "opted_in", op: "eq", value: true }] },
      })
    ).body.count as number;
    await page
      .getByTestId("segment-count")
      .filter({ hasText: `${count} contacts match` })
      .waitFor();
    const agent = (
      await s.api("POST", "/v1/agents", {
        name: "Maya",
        system_prompt: "Help.",
        greeting: "Hi, Maya here.",
        sms: { knowledge: "We are open 9am to 5pm." },
      })
    ).body.agent;
    await page.goto(`${s.url}/agents/${agent.id}`);
    await page.getByLabel("Message as the contact").fill("When are you open?");
    await page.getByRole("region", { name: "Test chat" }).getByRole("button", { name: "Send" }).click();
    await page
      .getByRole("region", { name: "Test chat" })
      .getByText(/9am to 5pm|Maya/)
      .first()
      .waitFor();
    // Settings grouped by purpose, in words; voice settings only for voice agents.
    const settings = page.getByRole("form", { name: "Agent settings" });
    for (const group of ["Persona", "Conversation", "Handing off to a person", "Timing", "Follow-ups"])
      await settings.getByRole("group", { name: group }).waitFor();
    expect(await settings.getByRole("group", { name: "Voice" }).count()).toBe(0);
    await settings.getByLabel("Hand off when the contact is upset").uncheck();
    await settings.getByLabel("Time zone of the quiet hours").fill("Mars/Olympus");
    await settings.getByRole("button", { name: "Save agent" }).click();
    await settings
      .locator(".field", { hasText: "Time zone of the quiet hours" })
      .getByRole("alert")
      .waitFor();
    await settings.getByLabel("Time zone of the quiet hours").fill("America/Chicago");
    await settings.getByLabel("Longest reply (characters)").fill("320");
    await settings.getByRole("button", { name: "Save agent" }).click();
    await settings.getByRole("status").filter({ hasText: "Saved" }).waitFor();
    const after = (await s.api("GET", `/v1/agents/${agent.id}`)).body.agent;
    expect([after.sms.max_length, after.sms.handoff_on_negative]).toEqual([320, false]);
    await shot(page, "agent-form");
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it("shows the API's field error next to the field of a form", async () => {
    const { context, page } = await signedIn("barbara.liskov@example.com", "admin");
    await page.getByRole("link", { name: "Settings" }).click();
    const brands = page.getByRole("region", { name: "10DLC brands" });
    await brands.getByLabel("Legal name").fill("Acme Bakery Inc");
    await brands.getByLabel("EIN (12-3456789)").fill("12345");
    await brands.getByLabel("Vertical").fill("RETAIL");
    await brands.getByLabel("E-mail").fill("a@acme.example.com");
    await brands.getByLabel("Phone").fill("4155550111");
    await brands.getByLabel("Street").fill("1 Main St");
    await brands.getByLabel("City").fill("San Francisco");
    await brands.getByLabel("State").fill("CA");
    await brands.getByLabel("ZIP").fill("94105");
    await brands.getByRole("button", { name: "Register brand" }).click();
    const error = brands.locator('label[for="/v1/10dlc/brands-ein"] [role="alert"]');
    await expect(error.textContent()).resolves.toBe("ein must look like 12-3456789");
    expect((await s.api("GET", "/v1/10dlc/brands")).body.total).toBe(0);
    await context.close();
  });

  it("renders every page at 1440×900 (screenshots) and 390×844 without a page error or a serious axe-core violation", async () => {
    const { context, page } = await signedIn("edsger@example.com", "admin");
    const someone = (await s.api("POST", "/v1/contacts", { phone_number: "+14155550199", first_name: "Ida" }))
      .body.contact;
    const pages = [
      "inbox",
      `contacts/${someone.id}`,
      "no-such-page",
      "contacts",
      "audience",
      "campaigns",
      "flows",
      "agents",
      "numbers",
      "offers",
      "analytics",
      "webhooks",
      "settings",
    ];
    const problems: string[] = [];
    for (const name of pages) {
      await page.goto(`${s.url}/${name}`);
      await page.getByRole("main").waitFor();
      await page.waitForTimeout(250);
      await shot(page, `page-${name.includes("/") ? "contact" : name}`);
      for (const problem of await accessibilityProblems(page)) problems.push(`${name}: ${problem}`);
    }
    expect(problems).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const name of pages) {
      await page.goto(`${s.url}/${name}`);
      await page.getByRole("main").waitFor();
      await page.waitForTimeout(150);
    }
    await shot(page, "mobile-settings");
    expect((page as Page & { errors?: string[] }).errors).toEqual([]);
    await context.close();
  }, 60_000);
});
