import type { Db } from "../../db/client";
import { invalid } from "../../lib/errors";
import { keywordOf } from "../messaging/inbound";
import { agentJson, engineAgentOf, findAgent } from "./agents";
import { decideTurn } from "./policy";
import { askEngine, engineFor } from "./runtime";

/** What the agent does with a CTIA keyword: nothing. */
const SILENT = {
  text: "",
  intent: "none" as const,
  sentiment: "neutral" as const,
  confidence: 1,
  goal_reached: false,
  captured: {},
  handoff: null,
};

/**
 * POST /v1/agents/{id}/test (API.md §6.3): the live reply loop's engine call and `decideTurn` on
 * a conversation given in the body, with nothing written or sent. The turns the agent has had are
 * its messages in the conversation; the contact's messages after its last one are what it answers.
 */
export async function testChat(
  db: Db,
  workspaceId: string,
  id: string,
  messages: { role: "contact" | "agent"; text: string }[],
) {
  const agent = agentJson(await findAgent(db, workspaceId, id));
  if (messages.length === 0) throw invalid("messages must have at least 1 item");
  let lastAgent = -1;
  messages.forEach((m, i) => {
    if (m.role === "agent") lastAgent = i;
  });
  const pending = messages
    .slice(lastAgent + 1)
    .filter((m) => m.role === "contact")
    .map((m) => m.text);
  // As live: a CTIA keyword is never answered by the agent (the compliance reply answers it), and
  // a STOP cancels a reply that was owed.
  const keywords = pending.map(keywordOf);
  if (pending.length > 0 && (keywords.every((k) => k !== null) || keywords.includes("opt_out")))
    return SILENT;
  const turns = messages.filter((m) => m.role === "agent").length;
  const opening = pending.length === 0 && turns === 0;
  const answer = await askEngine(engineFor(db), {
    agent: engineAgentOf(agent),
    thread: messages.map((m) => ({ role: m.role, text: m.text })),
    known: {},
    ...(opening ? { opening: true } : {}),
  });
  const decision = decideTurn(agent, { turns, goalReached: false }, pending.join("\n"), answer);
  return {
    text: decision.text,
    intent: decision.intent,
    sentiment: decision.sentiment,
    confidence: decision.confidence,
    goal_reached: decision.goalReached,
    captured: decision.captured,
    handoff: decision.handoff,
  };
}
