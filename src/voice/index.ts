/**
 * Picks the voice provider named by `VOICE` (default `simulated`) and reads its settings from the
 * environment once, failing fast with a clear message (docs/calls.md, "Voice").
 */
import { ConfigError, intFrom, MAX_MS } from "../config";
import type { DbOrTx } from "../db/client";
import type { Clock } from "../lib/time";
import type { VoiceProvider } from "./provider";
import { RetellVoice } from "./retell";
import { SimulatedVoice } from "./simulated";

export * from "./provider";
export { listSandboxCalls, SIMULATED_CALL_MAGIC, SimulatedVoice } from "./simulated";

export type VoiceSettings =
  | { voice: "simulated"; callMs: number }
  | { voice: "retell"; apiKey: string; apiBase: string; timeoutMs: number };

/** The voice provider's settings from the environment, validated (ConfigError with a clear message). */
export function loadVoiceSettings(env: Record<string, string | undefined> = process.env): VoiceSettings {
  const voice = env.VOICE || "simulated";
  if (voice === "retell") {
    const apiKey = env.RETELL_API_KEY ?? "";
    if (!apiKey) throw new ConfigError("VOICE=retell needs RETELL_API_KEY");
    const apiBase = (env.RETELL_API_BASE || "https://api.retellai.com").replace(/\/+$/, "");
    if (!/^https?:\/\//.test(apiBase))
      throw new ConfigError(`RETELL_API_BASE must be an http(s) URL (got "${apiBase}")`);
    return {
      voice,
      apiKey,
      apiBase,
      timeoutMs: intFrom("RETELL_TIMEOUT_MS", env.RETELL_TIMEOUT_MS, 10_000, 0, MAX_MS),
    };
  }
  if (voice !== "simulated") throw new ConfigError(`VOICE must be one of simulated, retell (got "${voice}")`);
  return { voice, callMs: intFrom("SIMULATED_CALL_MS", env.SIMULATED_CALL_MS, 2000, 0, MAX_MS) };
}

export function createVoiceProvider(
  settings: VoiceSettings,
  deps: { db: DbOrTx; clock: Clock },
): VoiceProvider {
  if (settings.voice === "retell")
    return new RetellVoice({
      apiKey: settings.apiKey,
      apiBase: settings.apiBase,
      timeoutMs: settings.timeoutMs,
    });
  return new SimulatedVoice(deps.db, deps.clock, { callMs: settings.callMs });
}
