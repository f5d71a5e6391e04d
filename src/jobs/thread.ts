/**
 * The background thread of `serve` (see startBackground): its own connection to the database, its
 * own carrier and voice adapters, the worker, the scheduler and the search indexer. The server's
 * thread only answers requests. Messages: {type:"start", config, env} → {type:"ready"} or
 * {type:"failed", error}; {type:"wake"} (a job was enqueued over there); {type:"stop", graceMs} →
 * {type:"stopped"}.
 */

import { createCarrier, loadCarrierSettings } from "../carriers";
import type { Config } from "../config";
import { adoptWriteSignal, type Db, openDatabase, startCheckpoints } from "../db/client";
import { openPgDatabase } from "../db/pg-database";
import { setLogLevel } from "../lib/log";
import { systemClock } from "../lib/time";
import { createVoiceProvider, loadVoiceSettings } from "../voice";
import { type Background, startBackground, startRuntimes } from "./background";

declare const self: Worker;

export type ThreadRequest =
  | {
      type: "start";
      config: Config;
      env: Record<string, string | undefined>;
      /** The request thread's write-lock signal (SQLite): both threads' transactions move it. */
      writeSignal: SharedArrayBuffer;
    }
  | { type: "wake" }
  | { type: "stop"; graceMs: number };
export type ThreadReply = { type: "ready" } | { type: "failed"; error: string } | { type: "stopped" };

let handle: { db: Db; close(): Promise<void> | void } | null = null;
let background: Background | null = null;
let checkpoints: { stop(): void } | null = null;
const reply = (message: ThreadReply) => self.postMessage(message);

self.onmessage = async (event: MessageEvent<ThreadRequest>) => {
  const message = event.data;
  if (message.type === "start") {
    try {
      const { config, env } = message;
      setLogLevel(config.logLevel);
      adoptWriteSignal(message.writeSignal);
      // The request thread migrated the database before it started this one.
      const sqlite = config.databaseUrl
        ? null
        : openDatabase(config.dbPath, { cacheMb: config.sqliteCacheMb });
      handle =
        sqlite ??
        (await openPgDatabase(config.databaseUrl as string, { max: config.databasePoolMax, migrate: false }));
      const carrier = createCarrier(
        config,
        { db: handle.db, clock: systemClock },
        loadCarrierSettings(config, env),
      );
      const voice = createVoiceProvider(loadVoiceSettings(env), { db: handle.db, clock: systemClock });
      startRuntimes(handle.db, config, carrier, voice);
      background = startBackground(handle.db, carrier, voice, config);
      // The request thread leaves checkpoints to this one (see startBackgroundThread).
      if (sqlite) checkpoints = startCheckpoints(sqlite.sqlite);
      reply({ type: "ready" });
    } catch (error) {
      reply({ type: "failed", error: error instanceof Error ? error.message : String(error) });
    }
  } else if (message.type === "wake") {
    background?.worker.wake();
  } else if (message.type === "stop") {
    await background?.stop(message.graceMs);
    checkpoints?.stop();
    await handle?.close();
    reply({ type: "stopped" });
  }
};
