/**
 * The dashboard's figures against the built binary, in headless Chromium:
 *   - initial JavaScript (the entry chunk, gzip), the flow editor excluded;
 *   - first page usable: from navigation to the inbox's first thread row on screen, signed in, in a
 *     workspace of CONTACTS (default 100,000) contacts and THREADS (default 10,000) threads;
 *   - the inbox list of THREADS threads loads a page at a time: rows in the page after load, and
 *     after scrolling to the end once.
 *
 *   bun scripts/bench/dashboard.ts            (SKIP_BUILD=1 to reuse dist/outreach)
 */
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { ensureBinary, startBinary } from "./support";

const CONTACTS = Number(process.env.CONTACTS ?? 100_000);
const THREADS = Number(process.env.THREADS ?? 10_000);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const OURS = "+14155550100";

ensureBinary();
const server = await startBinary();
const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
const api = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(server.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as Record<string, never>;
};

try {
  await api("POST", "/v1/numbers", { number: OURS });
  for (let i = 0; i < CONTACTS; i += 5000) {
    const contacts = Array.from({ length: Math.min(5000, CONTACTS - i) }, (_, j) => ({
      phone_number: `+1415${String(7000000 + i + j).padStart(7, "0")}`,
      first_name: `P${i + j}`,
    }));
    await api("POST", "/v1/contacts/import", { contacts });
  }
  // Threads: an inbound message from THREADS of them, 16 at a time.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < THREADS) {
        const i = next++;
        await api("POST", "/v1/sandbox/inbound", {
          from: `+1415${String(7000000 + i).padStart(7, "0")}`,
          to: OURS,
          body: `Question ${i}`,
        });
      }
    }),
  );
  const invited = (await api("POST", "/v1/users", {
    email: "bench@example.com",
    name: "Bench",
    role: "admin",
  })) as unknown as {
    setup_url: string;
  };

  const html = await (await fetch(`${server.url}/`)).text();
  const entry = html.match(/\/assets\/(app-[A-Z0-9]+\.js)/)?.[1];
  const js = new Uint8Array(await (await fetch(`${server.url}/assets/${entry}`)).arrayBuffer());
  console.log(
    `initial JavaScript: ${entry} ${(js.length / 1024).toFixed(0)} KB, ${(gzipSync(js).length / 1024).toFixed(1)} KB gzip`,
  );

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const setup = new URL(invited.setup_url);
  await page.goto(server.url + setup.pathname + setup.search);
  await page.getByLabel("Name").fill("Bench");
  await page.getByLabel(/^Password/).fill("correct horse battery");
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();

  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await page.goto(`${server.url}/inbox`);
    await page.locator(".thread-list li a").first().waitFor();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  console.log(
    `first page usable (navigation → first thread row), 5 loads: median ${times[2].toFixed(0)} ms, max ${times[4].toFixed(0)} ms`,
  );
  const before = await page.locator(".thread-list li a").count();
  const total = await page.getByText(/\d+ threads/).textContent();
  await page.locator(".thread-list li.sentinel").scrollIntoViewIfNeeded();
  await page.waitForTimeout(1000);
  const after = await page.locator(".thread-list li a").count();
  console.log(`inbox: ${total}; rows after load ${before}, after one scroll to the end ${after}`);
  await browser.close();
} finally {
  await server.stop();
}
