/**
 * Hostile input against the built binary (API.md §7.2), two figures:
 *  - 12 concurrent 60 MiB chunked posts to each unauthenticated route with a small body limit
 *    (`/carriers/twilio/status`, `/auth/login`, `/t/collect`) and to `/v1/contacts` without a key:
 *    the server's peak and settled RSS (it must stay under 150 MB); then the same from raw sockets
 *    that ignore the answer and send all 60 MiB;
 *  - 60 concurrent sign-ins for one e-mail (59 wrong passwords, 1 right): how many passwords were
 *    checked (answers other than 429; at most 10).
 * Usage: bun scripts/bench/hostile.ts   (SKIP_BUILD=1 reuses dist/outreach)
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { ensureBinary, rssMb, type StartedServer, startBinary } from "./support";

const POSTS = 12;
const BODY_BYTES = 60 * 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024).fill(120);

/** One chunked POST of BODY_BYTES; answers the status and how much the server let us send. */
async function hugeChunkedPost(url: string, contentType: string) {
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= BODY_BYTES) return controller.close();
      sent += CHUNK.byteLength;
      controller.enqueue(CHUNK);
    },
  });
  try {
    const response = await fetch(url, {
      method: "POST",
      body,
      headers: { "content-type": contentType },
      duplex: "half",
    } as RequestInit);
    await response.arrayBuffer();
    return { status: response.status, sentMb: sent / 1048576 };
  } catch (error) {
    return { status: 0, sentMb: sent / 1048576, error: String(error) };
  }
}

/** A raw-socket client that sends all BODY_BYTES chunked whatever the server answers; its status line. */
function stubbornChunkedPost(port: number, path: string): Promise<string> {
  const frame = Buffer.concat([
    Buffer.from(`${CHUNK.byteLength.toString(16)}\r\n`),
    Buffer.from(CHUNK),
    Buffer.from("\r\n"),
  ]);
  return new Promise((resolve) => {
    let answer = "";
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n`,
      );
      let frames = 0;
      const pump = () => {
        while (frames < BODY_BYTES / CHUNK.byteLength) {
          frames++;
          if (!socket.write(frame)) return void socket.once("drain", pump);
        }
        socket.end("0\r\n\r\n");
      };
      pump();
    });
    socket.on("data", (data) => {
      if (answer.length < 100) answer += data.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(answer.split("\r\n")[0].split(" ")[1] ?? "closed"));
  });
}

async function bodies(server: StartedServer) {
  const pid = server.proc.pid;
  const idle = rssMb(pid);
  const routes: [string, string][] = [
    ["/carriers/twilio/status?message_id=x", "application/x-www-form-urlencoded"],
    ["/auth/login", "application/json"],
    ["/t/collect", "text/plain"],
    ["/v1/contacts", "application/json"],
  ];
  let peak = idle;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 10);
  const rows: string[] = [];
  for (const [path, type] of routes) {
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: POSTS }, () => hugeChunkedPost(`${server.url}${path}`, type)),
    );
    const statuses = [...new Set(results.map((r) => r.status))].join(",");
    const sent = Math.max(...results.map((r) => r.sentMb));
    rows.push(
      `| POST ${path.split("?")[0]} | ${statuses} | ${sent.toFixed(1)} MiB | ${Math.round(performance.now() - t0)} ms | ${peak.toFixed(0)} MB |`,
    );
  }
  for (const path of ["/carriers/twilio/inbound", "/t/identify"]) {
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: POSTS }, () => stubbornChunkedPost(server.port, path)),
    );
    rows.push(
      `| POST ${path}, raw sockets sending all of it | ${[...new Set(results)].join(",")} | 60.0 MiB | ${Math.round(performance.now() - t0)} ms | ${peak.toFixed(0)} MB |`,
    );
  }
  clearInterval(sampler);
  await Bun.sleep(500);
  const settled = rssMb(pid);
  console.log(
    `${POSTS} concurrent ${BODY_BYTES / 1048576} MiB chunked posts per route (RSS idle ${idle.toFixed(0)} MB)\n`,
  );
  console.log("| route | answers | most one client sent | time | peak RSS so far |");
  console.log("|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log(`\npeak RSS ${peak.toFixed(0)} MB, settled ${settled.toFixed(0)} MB (limit 150 MB)`);
  return peak;
}

async function signIns(server: StartedServer) {
  const announced = readFileSync(`${server.dbPath}.log`, "utf8");
  const token = announced.match(/setup\?token=([A-Za-z0-9_-]{43})/)?.[1];
  if (!token) throw new Error("no setup link announced");
  const password = "correct horse battery";
  const setup = await fetch(`${server.url}/auth/setup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, name: "Root", email: "root@example.com", password }),
  });
  if (setup.status !== 200) throw new Error(`setup answered ${setup.status}`);
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      fetch(`${server.url}/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "root@example.com", password: i === 30 ? password : `wrong ${i}` }),
      }).then((r) => r.status),
    ),
  );
  const count = (status: number) => answers.filter((s) => s === status).length;
  const checked = answers.filter((s) => s !== 429).length;
  console.log(
    `\n60 concurrent sign-ins for one e-mail (59 wrong, 1 right): ${checked} passwords checked ` +
      `(401: ${count(401)}, 200: ${count(200)}, 429: ${count(429)}) in ${Math.round(performance.now() - t0)} ms (limit 10)`,
  );
  return checked;
}

ensureBinary();
const server = await startBinary();
try {
  const peak = await bodies(server);
  const checked = await signIns(server);
  if (peak >= 150 || checked > 10) process.exitCode = 1;
} finally {
  await server.stop();
}
