import type { Config } from "../config";
import { writeSignalBuffer } from "../db/client";
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
/** The waits before starting a new thread after one failed: doubling from the first to the last. */
const RESTART_FIRST_MS = 500;
const RESTART_LAST_MS = 30_000;

/** One running thread: its worker, and how to talk to it. */
interface Running {
  thread: Worker;
  send(message: ThreadRequest): void;
  next(timeoutMs: number): Promise<ThreadReply | null>;
}

/**
 * Starts a thread and waits for it to run; `onFailure` is called once if it dies afterwards (an
 * error it did not handle: a driver that throws outside any caller when its database is dropped).
 * Throws, with the thread ended, when it could not start.
 */
async function launch(
  config: Config,
  env: Record<string, string | undefined>,
  onFailure: (error: string) => void,
): Promise<Running> {
  const thread = new Worker(threadEntry());
  const send = (message: ThreadRequest) => thread.postMessage(message);
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
  let ready = false;
  let failed = false;
  let startError: string | null = null;
  thread.addEventListener("error", (event) => {
    const error = String(event.message ?? event);
    if (!ready) {
      startError = error;
      return;
    }
    if (failed) return;
    failed = true;
    onFailure(error);
  });

  const started = next(START_TIMEOUT_MS);
  send({ type: "start", config, env: { ...env }, writeSignal: writeSignalBuffer() });
  const reply = await started;
  if (reply?.type !== "ready") {
    thread.terminate();
    throw new Error(
      reply?.type === "failed"
        ? `the background thread could not start: ${reply.error}`
        : startError
          ? `the background thread could not start: ${startError}`
          : "the background thread did not start in time",
    );
  }
  ready = true;
  return { thread, send, next };
}

/**
 * Starts the background thread (src/jobs/thread.ts) and waits until it runs. Jobs enqueued by
 * this thread wake its worker at once (after the enqueuing transaction has committed: the message
 * is posted from a later task). A thread that dies is ended and replaced by a new one, after a
 * wait that doubles while starting fails (the database still gone), so the server goes on sending
 * once its database is back: the jobs the dead thread held run again when their leases expire,
 * as after a crash.
 */
export async function startBackgroundThread(
  config: Config,
  env: Record<string, string | undefined>,
): Promise<BackgroundThread> {
  let stopping = false;
  let current: Running | null = null;
  let restartTimer: ReturnType<typeof setTimeout> | null = null;
  let restartWait = RESTART_FIRST_MS;

  const replaced = (error: string) => {
    if (stopping) return;
    log.error("the background thread failed; starting a new one", { error });
    current?.thread.terminate();
    current = null;
    scheduleRestart();
  };
  const scheduleRestart = () => {
    if (stopping || restartTimer) return;
    restartTimer = setTimeout(async () => {
      restartTimer = null;
      if (stopping) return;
      try {
        const running = await launch(config, env, replaced);
        if (stopping) {
          running.thread.terminate();
          return;
        }
        current = running;
        restartWait = RESTART_FIRST_MS;
        log.info("the background thread runs again");
        running.send({ type: "wake" });
      } catch (error) {
        log.error("the background thread could not start again; trying later", {
          error: error instanceof Error ? error.message : String(error),
          retry_in_ms: restartWait,
        });
        restartWait = Math.min(restartWait * 2, RESTART_LAST_MS);
        scheduleRestart();
      }
    }, restartWait);
  };

  current = await launch(config, env, replaced);

  let wakePosted = false;
  const unsubscribe = onJobEnqueued(() => {
    if (wakePosted) return;
    wakePosted = true;
    setImmediate(() => {
      wakePosted = false;
      if (!stopping) current?.send({ type: "wake" });
    });
  });

  return {
    async stop(graceMs) {
      if (stopping) return;
      stopping = true;
      unsubscribe();
      if (restartTimer) clearTimeout(restartTimer);
      const running = current;
      if (!running) return;
      const stopped = running.next(graceMs + 5_000);
      running.send({ type: "stop", graceMs });
      if ((await stopped)?.type !== "stopped") log.warn("the background thread did not stop in time");
      running.thread.terminate();
    },
  };
}
