import type { Config } from "../config";
import { log } from "../lib/log";
import { onJobEnqueued } from "./queue";
import type { ThreadReply, ThreadRequest } from "./thread";

export interface BackgroundThread {
  /** Stops the thread's work (draining running jobs up to graceMs) and ends it. */
  stop(graceMs: number): Promise<void>;
}

/**
 * The thread's entry point: beside this file when run from source; in the compiled binary, where
 * scripts/build.ts embeds it as a second entry point, at its path under src/ from the bundle's root.
 */
function threadEntry(): string {
  const compiled = import.meta.url.includes("/$bunfs/");
  return new URL(compiled ? "./jobs/thread.ts" : "./thread.ts", import.meta.url).href;
}

/** How long the background thread may take to open the database and start. */
const START_TIMEOUT_MS = 30_000;

/**
 * Starts the background thread (src/jobs/thread.ts) and waits until it runs. Jobs enqueued by
 * this thread wake its worker at once (after the enqueuing transaction has committed: the message
 * is posted from a later task). If the thread dies, the process exits with an error: a server that
 * answers but never sends must not look healthy.
 */
export async function startBackgroundThread(
  config: Config,
  env: Record<string, string | undefined>,
): Promise<BackgroundThread> {
  const thread = new Worker(threadEntry());
  const send = (message: ThreadRequest) => thread.postMessage(message);
  let stopping = false;
  const replies: ((reply: ThreadReply) => void)[] = [];
  thread.onmessage = (event: MessageEvent<ThreadReply>) => {
    for (const listener of replies.splice(0)) listener(event.data);
  };
  const next = (timeoutMs: number) =>
    new Promise<ThreadReply | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      replies.push((reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
    });
  thread.addEventListener("error", (event) => {
    if (stopping) return;
    log.error("the background thread failed; exiting", { error: String(event.message ?? event) });
    process.exit(1);
  });

  const started = next(START_TIMEOUT_MS);
  send({ type: "start", config, env: { ...env } });
  const reply = await started;
  if (reply?.type !== "ready") {
    stopping = true;
    thread.terminate();
    throw new Error(
      reply?.type === "failed"
        ? `the background thread could not start: ${reply.error}`
        : "the background thread did not start in time",
    );
  }

  let wakePosted = false;
  const unsubscribe = onJobEnqueued(() => {
    if (wakePosted) return;
    wakePosted = true;
    setImmediate(() => {
      wakePosted = false;
      if (!stopping) send({ type: "wake" });
    });
  });

  return {
    async stop(graceMs) {
      if (stopping) return;
      stopping = true;
      unsubscribe();
      const stopped = next(graceMs + 5_000);
      send({ type: "stop", graceMs });
      if ((await stopped)?.type !== "stopped") log.warn("the background thread did not stop in time");
      thread.terminate();
    },
  };
}
