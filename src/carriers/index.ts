/**
 * Picks the carrier adapter named by `CARRIER` (default `simulated`) and reads its settings from
 * the environment once, failing fast with a clear message (docs/numbers.md, "Carriers").
 */
import type { Config } from "../config";
import { ConfigError, intFrom, MAX_MS } from "../config";
import type { Db } from "../db/client";
import type { Clock } from "../lib/time";
import type { Carrier } from "./carrier";
import { SimulatedCarrier } from "./simulated";
import { TwilioCarrier } from "./twilio";

export * from "./carrier";
export { listSandboxSends, type SandboxSend, SIMULATED_MAGIC, SimulatedCarrier } from "./simulated";
export { TwilioCarrier } from "./twilio";

export interface CarrierDeps {
  db: Db;
  clock: Clock;
  env?: Record<string, string | undefined>;
}

export type CarrierSettings =
  | { carrier: "simulated"; deliveryDelayMs: number; callMs: number; reviewMs: number }
  | {
      carrier: "twilio";
      accountSid: string;
      authToken: string;
      apiBase: string;
      publicUrl: string;
      timeoutMs: number;
    };

/**
 * The carrier's settings from the environment, validated (ConfigError with a clear message).
 * Called at boot before the database is touched, so a bad setting fails fast.
 */
export function loadCarrierSettings(
  config: Pick<Config, "carrier" | "publicUrl">,
  env: Record<string, string | undefined> = process.env,
): CarrierSettings {
  if (config.carrier === "twilio") {
    const accountSid = env.TWILIO_ACCOUNT_SID ?? "";
    const authToken = env.TWILIO_AUTH_TOKEN ?? "";
    if (!accountSid || !authToken) {
      throw new ConfigError("CARRIER=twilio needs TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN");
    }
    const apiBase = (env.TWILIO_API_BASE || "https://api.twilio.com").replace(/\/+$/, "");
    if (!/^https?:\/\//.test(apiBase))
      throw new ConfigError(`TWILIO_API_BASE must be an http(s) URL (got "${apiBase}")`);
    return {
      carrier: "twilio",
      accountSid,
      authToken,
      apiBase,
      publicUrl: (env.TWILIO_CALLBACK_BASE_URL || config.publicUrl).replace(/\/+$/, ""),
      timeoutMs: intFrom("TWILIO_TIMEOUT_MS", env.TWILIO_TIMEOUT_MS, 10_000, 0, MAX_MS),
    };
  }
  return {
    carrier: "simulated",
    deliveryDelayMs: intFrom("SIMULATED_DELIVERY_MS", env.SIMULATED_DELIVERY_MS, 200, 0, MAX_MS),
    callMs: intFrom("SIMULATED_CALL_MS", env.SIMULATED_CALL_MS, 2000, 0, MAX_MS),
    reviewMs: intFrom("SIMULATED_REVIEW_MS", env.SIMULATED_REVIEW_MS, 2000, 0, MAX_MS),
  };
}

/** The adapter for `config.carrier` (settings from `loadCarrierSettings` unless given). */
export function createCarrier(
  config: Pick<Config, "carrier" | "publicUrl">,
  deps: CarrierDeps,
  settings: CarrierSettings = loadCarrierSettings(config, deps.env),
): Carrier {
  if (settings.carrier === "twilio") {
    const { carrier: _, ...options } = settings;
    return new TwilioCarrier(options);
  }
  return new SimulatedCarrier(deps.db, deps.clock, {
    deliveryDelayMs: settings.deliveryDelayMs,
    callMs: settings.callMs,
    reviewMs: settings.reviewMs,
  });
}

/** True when the simulated carrier is active (the sandbox endpoints exist only then). */
export function isSimulated(carrier: Carrier): carrier is SimulatedCarrier {
  return carrier instanceof SimulatedCarrier;
}
