/**
 * The voices agents may speak with (`GET /v1/voices`, API.md §3 Voices). The simulated voice
 * provider ships this fixed catalogue, so a voice agent can be configured and checked with no
 * network; a real provider's catalogue replaces it when one is configured.
 */
import type { Voice } from "./provider";

export type { Voice };

export const SIMULATED_VOICES: readonly Voice[] = [
  { voice_id: "sim-ava", name: "Ava", provider: "simulated", language: "en-US", gender: "female" },
  { voice_id: "sim-noah", name: "Noah", provider: "simulated", language: "en-US", gender: "male" },
  { voice_id: "sim-grace", name: "Grace", provider: "simulated", language: "en-GB", gender: "female" },
  { voice_id: "sim-oliver", name: "Oliver", provider: "simulated", language: "en-GB", gender: "male" },
  { voice_id: "sim-lucia", name: "Lucía", provider: "simulated", language: "es-ES", gender: "female" },
  { voice_id: "sim-mateo", name: "Mateo", provider: "simulated", language: "es-MX", gender: "male" },
  { voice_id: "sim-maya", name: "Maya", provider: "simulated", language: "en-US", gender: "female" },
  { voice_id: "sim-james", name: "James", provider: "simulated", language: "en-US", gender: "male" },
  { voice_id: "sim-chloe", name: "Chloé", provider: "simulated", language: "fr-FR", gender: "female" },
  { voice_id: "sim-lukas", name: "Lukas", provider: "simulated", language: "de-DE", gender: "male" },
  { voice_id: "sim-priya", name: "Priya", provider: "simulated", language: "en-IN", gender: "female" },
  { voice_id: "sim-liam", name: "Liam", provider: "simulated", language: "en-AU", gender: "male" },
];
