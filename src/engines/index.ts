import type { Config } from "../config";
import type { AgentEngine } from "./llm";
import { offlineEngine } from "./offline";
import { openAiCompatibleEngine } from "./openai-compatible";

/** The engine SMS agents use: the OpenAI-compatible server of LLM_BASE_URL, else the offline engine. */
export function createEngine(config: Pick<Config, "llm">): AgentEngine {
  if (!config.llm) return offlineEngine;
  return openAiCompatibleEngine({
    baseUrl: config.llm.baseUrl,
    apiKey: config.llm.apiKey,
    model: config.llm.model,
    models: config.llm.models,
    timeoutMs: config.llm.timeoutMs,
  });
}
