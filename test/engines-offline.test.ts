/**
 * The built-in offline agent engine (src/engines/offline.ts): scenario tables over the pure core.
 * Opening, knowledge answers, unknown questions, maxLength, capture (and what must not be
 * captured), sentiment with negation, intent levels, goal_reached, guardrails, the human request,
 * follow-ups and determinism. Replies are compared as whole strings where the wording is the point.
 */
import { describe, expect, test } from "bun:test";
import {
  type EngineAgent,
  type EngineAnswer,
  type EngineInput,
  type EngineTurn,
  type Intent,
  type Sentiment,
  TONES,
  type Tone,
} from "../src/engines/llm";
import { captureFrom, intentOf, offlineAnswer, offlineEngine, sentimentOf } from "../src/engines/offline";

const KNOWLEDGE = `Acme Roofing has served Springfield since 1998.
We are open Monday to Friday from 8am to 6pm, and Saturday from 9am to 1pm.
Our office is located at 12 Main St. Springfield, next to the library.
Hours:
- Sunday: closed
Pricing:
- Roof inspections are free.
- A full roof replacement starts at $8,500 for an average home.
- Repairs start at $250.
We install asphalt shingles, metal roofs and flat roofs.
All our roofers are licensed and insured.
Every roof comes with a 10-year workmanship warranty.
We accept cash, checks and all major credit cards.`;

const AGENT: EngineAgent = {
  name: "Maya",
  systemPrompt: "You answer for Acme Roofing.",
  goal: "Book a free roof inspection",
  greeting: null,
  tone: "professional",
  creativity: "low",
  guardrails: [],
  knowledge: KNOWLEDGE,
  maxLength: 320,
  modelTier: "fast",
  captureFields: [],
};

const OPENING = "Hello, this is Maya. Would you like to book a free roof inspection?";

/** The engine's answer to `message`, sent after the agent's opening question. */
function ask(
  message: string,
  agent: Partial<EngineAgent> = {},
  known: Record<string, string> = {},
  before: EngineTurn[] = [],
): EngineAnswer {
  return offlineAnswer({
    agent: { ...AGENT, ...agent },
    thread: [...before, { role: "agent", text: OPENING }, { role: "contact", text: message }],
    known,
  });
}

describe("opening: the greeting, else an opener from the name and goal", () => {
  const rows: { name: string; input: EngineInput; reply: string }[] = [
    {
      name: "the greeting as set, whatever the goal",
      input: { agent: { ...AGENT, greeting: "Hi from Acme! Reply STOP to opt out." }, thread: [], known: {} },
      reply: "Hi from Acme! Reply STOP to opt out.",
    },
    {
      name: "no greeting: hello by tone, the name and the goal as a question",
      input: { agent: AGENT, thread: [], known: {} },
      reply: OPENING,
    },
    {
      name: "no greeting, a known first name, friendly",
      input: { agent: { ...AGENT, tone: "friendly" }, thread: [], known: { first_name: "Ann" } },
      reply: "Hi Ann! This is Maya. Would you like to book a free roof inspection?",
    },
    {
      name: "no greeting and no goal: an open question",
      input: { agent: { ...AGENT, goal: null, tone: "casual" }, thread: [], known: {} },
      reply: "Hey! Maya here. How can I help you today?",
    },
    {
      name: "a goal that is no verb reads as 'interested in'",
      input: { agent: { ...AGENT, goal: "A free roof inspection this month" }, thread: [], known: {} },
      reply: "Hello, this is Maya. Are you interested in a free roof inspection this month?",
    },
    {
      name: "a goal worded for the agent is turned to the contact",
      input: { agent: { ...AGENT, goal: "Get the contact to schedule a demo." }, thread: [], known: {} },
      reply: "Hello, this is Maya. Would you like to schedule a demo?",
    },
    {
      name: "a goal to collect an email asks for it",
      input: { agent: { ...AGENT, goal: "Collect the contact's email" }, thread: [], known: {} },
      reply: "Hello, this is Maya. What's the best email to reach you?",
    },
    {
      name: "`opening` asks for the opener even when the thread has messages",
      input: {
        agent: { ...AGENT, greeting: "Hi again from Acme!" },
        thread: [{ role: "contact", text: "hello?" }],
        known: {},
        opening: true,
      },
      reply: "Hi again from Acme!",
    },
  ];
  for (const { name, input, reply } of rows)
    test(name, () => {
      expect(offlineAnswer(input)).toEqual({
        reply,
        intent: "none",
        sentiment: "neutral",
        confidence: 1,
        goal_reached: false,
        captured: {},
        handoff: null,
      });
    });
});

describe("knowledge: the best-matching sentences answer the question", () => {
  const rows: { name: string; message: string; reply: string; confidence: number }[] = [
    {
      name: "hours",
      message: "What are your hours?",
      reply: "We are open Monday to Friday from 8am to 6pm, and Saturday from 9am to 1pm.",
      confidence: 1,
    },
    {
      name: "a day: the sentence that names it wins over the general hours",
      message: "are you open on sunday?",
      reply: "Sunday: closed.",
      confidence: 1,
    },
    {
      name: "price, asked as 'how much' (bullets under a Pricing: heading)",
      message: "How much do repairs cost?",
      reply: "Repairs start at $250.",
      confidence: 1,
    },
    {
      name: "location, asked with other words than the knowledge uses",
      message: "Where are you guys?",
      reply: "Our office is located at 12 Main St. Springfield, next to the library.",
      confidence: 1,
    },
    {
      name: "plural and tense variants meet (cards / insured)",
      message: "Do you take credit cards? Are you insured?",
      reply: "All our roofers are licensed and insured. We accept cash, checks and all major credit cards.",
      confidence: 1,
    },
    {
      name: "a two-part question takes one sentence for each part",
      message: "What are your hours and where are you located?",
      reply:
        "We are open Monday to Friday from 8am to 6pm, and Saturday from 9am to 1pm. Our office is located at 12 Main St. Springfield, next to the library.",
      confidence: 1,
    },
    {
      name: "a partly covered question answers with less confidence",
      message: "how much is a new roof?",
      reply: "Roof inspections are free. A full roof replacement starts at $8,500 for an average home.",
      confidence: 0.57,
    },
  ];
  for (const { name, message, reply, confidence } of rows)
    test(name, () => {
      const answer = ask(message);
      expect({ reply: answer.reply, confidence: answer.confidence }).toEqual({ reply, confidence });
      expect(answer.handoff).toBeNull();
    });

  test("a clear match is 0.6 or more; the tone's prefix and (creativity above low) the next step", () => {
    const answer = ask("What's the warranty?", { tone: "friendly", creativity: "balanced" });
    expect(answer.reply).toBe(
      "Sure! Every roof comes with a 10-year workmanship warranty. What day and time work best for your free roof inspection?",
    );
    expect(answer.confidence).toBeGreaterThanOrEqual(0.6);
  });

  test("each tone has its own short prefix", () => {
    const prefixes: Record<Tone, string> = {
      friendly: "Sure! ",
      professional: "",
      casual: "Sure thing! ",
      empathetic: "Happy to help. ",
      direct: "",
    };
    for (const tone of TONES)
      expect(ask("Are you insured?", { tone }).reply).toBe(
        `${prefixes[tone]}All our roofers are licensed and insured.`,
      );
  });
});

describe("unknown: a question the knowledge does not cover gets low confidence and a step toward the goal", () => {
  const rows: {
    name: string;
    message: string;
    agent?: Partial<EngineAgent>;
    known?: Record<string, string>;
    reply: string;
  }[] = [
    {
      name: "financing: not in the knowledge, so the goal's next capture",
      message: "Do you offer financing?",
      reply:
        "I don't have that information right now. What day and time work best for your free roof inspection?",
    },
    {
      name: "sharing one word with a sentence ('install') is not an answer",
      message: "Do you install solar panels?",
      reply:
        "I don't have that information right now. What day and time work best for your free roof inspection?",
    },
    {
      name: "gutters: a missing capture field is asked for first",
      message: "do you do gutters?",
      agent: { captureFields: ["email"] },
      reply: "I don't have that information right now. What's the best email to reach you?",
    },
    {
      name: "a known field is not asked again",
      message: "do you do gutters?",
      agent: { captureFields: ["email"] },
      known: { email: "ann@example.com" },
      reply:
        "I don't have that information right now. What day and time work best for your free roof inspection?",
    },
    {
      name: "a goal with nothing to capture is asked as a question",
      message: "Do you sell pool heaters?",
      agent: { goal: "Sign up for the spring promotion" },
      reply: "I don't have that information right now. Would you like to sign up for the spring promotion?",
    },
    {
      name: "no goal: only the honest answer",
      message: "Do you sell pool heaters?",
      agent: { goal: null },
      reply: "I don't have that information right now.",
    },
  ];
  for (const { name, message, agent, known, reply } of rows)
    test(name, () => {
      const answer = ask(message, agent, known);
      expect(answer.reply).toBe(reply);
      expect(answer.confidence).toBeLessThan(0.5);
      expect(answer.confidence).toBeLessThanOrEqual(0.3);
    });

  test("small talk: a word back and the next step, confidence 0.3", () => {
    expect(ask("hi").reply).toBe("Hi! What day and time work best for your free roof inspection?");
    expect(ask("thanks!", { goal: null })).toMatchObject({ reply: "You're welcome!", confidence: 0.3 });
    expect(ask("no", { goal: null }).reply).toBe("No problem, feel free to reach out if anything changes.");
    expect(ask("No, I love it", { goal: null }).reply).toBe("Great! How can I help you today?");
    expect(ask("no problem", { goal: null }).reply).toBe("How can I help you today?");
  });
});

describe("maxLength: never longer, cut at a sentence end, else a word boundary", () => {
  const rows: { name: string; input: EngineInput; reply: string }[] = [
    {
      name: "a greeting cut at its last sentence end that fits",
      input: {
        agent: { ...AGENT, greeting: "Hi there! We fix roofs. Reply STOP to opt out.", maxLength: 30 },
        thread: [],
        known: {},
      },
      reply: "Hi there! We fix roofs.",
    },
    {
      name: "no sentence end fits: the last word boundary",
      input: {
        agent: { ...AGENT, greeting: "Welcome to Acme Roofing and Gutters", maxLength: 20 },
        thread: [],
        known: {},
      },
      reply: "Welcome to Acme",
    },
    {
      name: "an abbreviation is no sentence end",
      input: {
        agent: { ...AGENT, greeting: "Visit 12 Main St. Springfield today.", maxLength: 30 },
        thread: [],
        known: {},
      },
      reply: "Visit 12 Main St. Springfield",
    },
    {
      name: "the tone's prefix goes before the answer is cut",
      input: {
        agent: { ...AGENT, tone: "friendly", maxLength: 25 },
        thread: [{ role: "contact", text: "How much is a repair?" }],
        known: {},
      },
      reply: "Repairs start at $250.",
    },
    {
      name: "the step after the answer goes when it does not fit",
      input: {
        agent: { ...AGENT, creativity: "high", maxLength: 80 },
        thread: [{ role: "contact", text: "How much is a repair?" }],
        known: {},
      },
      reply: "Repairs start at $250.",
    },
    {
      name: "a two-part answer that does not fit keeps the best sentence",
      input: {
        agent: { ...AGENT, maxLength: 60 },
        thread: [{ role: "contact", text: "Are you insured, and do you take credit cards?" }],
        known: {},
      },
      reply: "We accept cash, checks and all major credit cards.",
    },
  ];
  for (const { name, input, reply } of rows)
    test(name, () => {
      const answer = offlineAnswer(input);
      expect(answer.reply).toBe(reply);
      expect(answer.reply.length).toBeLessThanOrEqual(input.agent.maxLength);
    });

  test("every kind of reply respects a small maxLength", () => {
    const messages = [
      "What are your hours and where are you located?",
      "Do you offer financing?",
      "hi",
      "my email is a@b.co",
    ];
    for (const maxLength of [10, 24, 40, 70])
      for (const message of messages) {
        const { reply } = ask(message, { maxLength, captureFields: ["email"], tone: "empathetic" });
        expect(reply.length).toBeLessThanOrEqual(maxLength);
        expect(reply).not.toMatch(/\s$/);
      }
  });
});

describe("captureFrom: pattern capture, and what must not be captured", () => {
  const FIELDS = [
    "email",
    "phone",
    "zip",
    "first_name",
    "last_name",
    "name",
    "appointment_time",
    "date",
    "time",
  ];
  const rows: { name: string; text: string; fields?: string[]; expect: Record<string, string> }[] = [
    {
      name: "email, lowercased",
      text: "reach me at Bob.Smith@Example.com thanks",
      expect: { email: "bob.smith@example.com" },
    },
    {
      name: "US phone in its usual shapes → E.164",
      text: "my cell is (415) 555-0123",
      expect: { phone: "+14155550123" },
    },
    { name: "US phone with +1 and dots", text: "call +1 212.555.0100", expect: { phone: "+12125550100" } },
    { name: "international E.164", text: "whatsapp +44 20 7946 0958", expect: { phone: "+442079460958" } },
    { name: "a 10-digit phone is not a ZIP", text: "2125550100", expect: { phone: "+12125550100" } },
    { name: "ZIP", text: "my zip is 94110", expect: { zip: "94110" } },
    { name: "ZIP+4", text: "zip 10001-1234", expect: { zip: "10001-1234" } },
    {
      name: "phone and ZIP together",
      text: "212-555-0100, zip 10001",
      expect: { phone: "+12125550100", zip: "10001" },
    },
    { name: "a street number is not a ZIP", text: "I live at 12345 Main Street", expect: {} },
    { name: "an amount is not a ZIP", text: "it costs $12000 or 12,000.00", expect: {} },
    { name: "an order number is not a ZIP", text: "order #12345 and 1234567", expect: {} },
    {
      name: "my name is: first, last and full name, capitalised",
      text: "my name is bob smith",
      expect: { first_name: "Bob", last_name: "Smith", name: "Bob Smith" },
    },
    {
      name: "a hyphen and an apostrophe in a name",
      text: "My name is mary-jane o'neil.",
      expect: { first_name: "Mary-Jane", last_name: "O'Neil", name: "Mary-Jane O'Neil" },
    },
    {
      name: "I'm X stops at punctuation",
      text: "I'm Dana, interested in a roof",
      expect: { first_name: "Dana", name: "Dana" },
    },
    {
      name: "this is X stops at a non-name",
      text: "This is Sarah from Acme",
      expect: { first_name: "Sarah", name: "Sarah" },
    },
    { name: "call me X", text: "Call me Jim", expect: { first_name: "Jim", name: "Jim" } },
    {
      name: "a lowercase name alone in the message",
      text: "im bob",
      expect: { first_name: "Bob", name: "Bob" },
    },
    { name: "I'm fine is not a name", text: "I'm fine", expect: {} },
    { name: "I'm interested is not a name", text: "I'm interested", expect: {} },
    { name: "i'm looking is not a name", text: "i'm looking for a new roof", expect: {} },
    {
      name: "I'm not sure / busy / sorry / ready",
      text: "I'm not sure. I'm busy. I'm sorry. I'm ready",
      expect: {},
    },
    { name: "this is ridiculous is not a name", text: "this is ridiculous", expect: {} },
    { name: "my name is not important", text: "My name is not important", expect: {} },
    {
      name: "call me back is a time, not a name",
      text: "call me back tomorrow at 3pm",
      expect: { appointment_time: "tomorrow at 3pm", date: "tomorrow", time: "3pm" },
    },
    {
      name: "weekday and time",
      text: "Tuesday  10:30am works",
      expect: { appointment_time: "Tuesday 10:30am", date: "Tuesday", time: "10:30am" },
    },
    {
      name: "month/day at a bare hour",
      text: "12/5 at 2",
      expect: { appointment_time: "12/5 at 2", date: "12/5", time: "2" },
    },
    {
      name: "ISO date and 24-hour time",
      text: "2026-12-05 14:00",
      expect: { appointment_time: "2026-12-05 14:00", date: "2026-12-05", time: "14:00" },
    },
    { name: "a time alone", text: "3 pm is good", expect: { appointment_time: "3 pm", time: "3 pm" } },
    {
      name: "time then day",
      text: "how about 3pm on Friday?",
      expect: { appointment_time: "3pm on Friday", date: "Friday", time: "3pm" },
    },
    {
      name: "month name and day",
      text: "March 3rd, 2027 at 9am",
      expect: { appointment_time: "March 3rd, 2027 at 9am", date: "March 3rd, 2027", time: "9am" },
    },
    { name: "good morning is no time", text: "good morning! I am at 5 Elm", expect: {} },
    {
      name: "the last time said wins (a correction)",
      text: "Tuesday at 3pm. Actually make it Wednesday at 4pm",
      expect: { appointment_time: "Wednesday at 4pm", date: "Wednesday", time: "4pm" },
    },
    {
      name: "only the fields asked for",
      text: "I'm Bob, bob@x.io, 94110",
      fields: ["email"],
      expect: { email: "bob@x.io" },
    },
    {
      name: "an unknown field as '<field> is X' or '<field>: X'",
      text: "my company is Acme Roofing Inc. Roof type: cedar shakes",
      fields: ["company", "roof_type", "budget"],
      expect: { company: "Acme Roofing Inc", roof_type: "cedar shakes" },
    },
    {
      name: "'first name:' and 'last name:' labels",
      text: "first name: Bob, last name: Smith",
      fields: ["first_name", "last_name", "name"],
      expect: { first_name: "Bob", last_name: "Smith" },
    },
  ];
  for (const row of rows)
    test(row.name, () => expect(captureFrom(row.text, row.fields ?? FIELDS)).toEqual(row.expect));
});

describe("sentimentOf: lexicon with negation", () => {
  const rows: { text: string; expect: Sentiment }[] = [
    { text: "Great, thanks!", expect: "positive" },
    { text: "yes please, sounds good", expect: "positive" },
    { text: "ok", expect: "neutral" },
    { text: "What are your hours?", expect: "neutral" },
    { text: "this is terrible", expect: "negative" },
    { text: "not good", expect: "negative" },
    { text: "not bad", expect: "neutral" },
    { text: "not bad at all, thanks", expect: "positive" },
    { text: "I'm not angry", expect: "neutral" },
    { text: "No, I love it", expect: "positive" },
    { text: "thanks but not interested", expect: "negative" },
    { text: "Great, but this is a scam", expect: "negative" },
    { text: "stop texting me", expect: "negative" },
    { text: "leave me alone", expect: "negative" },
    { text: "wtf", expect: "negative" },
    { text: "I will report you", expect: "negative" },
    { text: "👍", expect: "positive" },
  ];
  for (const row of rows)
    test(JSON.stringify(row.text), () => expect(sentimentOf(row.text)).toBe(row.expect));
});

describe("intentOf: buying and meeting intent by phrase", () => {
  const rows: { text: string; expect: Intent }[] = [
    { text: "Sign me up!", expect: "high" },
    { text: "I want to buy one", expect: "high" },
    { text: "can I book for tuesday", expect: "high" },
    { text: "please call me tomorrow", expect: "high" },
    { text: "how do I pay?", expect: "high" },
    { text: "How much is it?", expect: "medium" },
    { text: "what's the price", expect: "medium" },
    { text: "I'm interested", expect: "medium" },
    { text: "tell me more", expect: "low" },
    { text: "maybe", expect: "low" },
    { text: "hi", expect: "none" },
    { text: "", expect: "none" },
    { text: "what's your schedule like", expect: "none" },
    { text: "I don't want to buy anything", expect: "none" },
    { text: "no thanks, not interested in the price", expect: "none" },
    { text: "not now, maybe later", expect: "none" },
  ];
  for (const row of rows) test(JSON.stringify(row.text), () => expect(intentOf(row.text)).toBe(row.expect));
});

describe("goal_reached, intent and captured in the answer", () => {
  const rows: {
    name: string;
    message: string;
    agent?: Partial<EngineAgent>;
    known?: Record<string, string>;
    expect: Partial<EngineAnswer>;
  }[] = [
    {
      name: "a booking goal is reached when a time is captured",
      message: "Sure, Tuesday at 3pm works",
      agent: { captureFields: ["appointment_time"] },
      expect: {
        reply: "Thank you. You're all set for Tuesday at 3pm!",
        intent: "high",
        goal_reached: true,
        captured: { appointment_time: "Tuesday at 3pm" },
        confidence: 0.8,
      },
    },
    {
      name: "the time counts for the goal even when not a capture field (and is not reported)",
      message: "tomorrow morning is fine",
      expect: { reply: "Thank you. You're all set for tomorrow morning!", goal_reached: true, captured: {} },
    },
    {
      name: "a day in a question the knowledge answers is no booking",
      message: "Are you open on Sunday?",
      agent: { captureFields: ["appointment_time"] },
      expect: { reply: "Sunday: closed.", goal_reached: false, captured: {} },
    },
    {
      name: "yes to the goal's question is high intent, not yet the booking",
      message: "Yes please",
      expect: {
        reply: "Great! What day and time work best for your free roof inspection?",
        intent: "high",
        sentiment: "positive",
        goal_reached: false,
      },
    },
    {
      name: "an email goal is reached when an email is captured",
      message: "sure, it's jo@example.com",
      agent: { goal: "Get the contact's email for our newsletter", captureFields: ["email", "first_name"] },
      expect: {
        reply: "Thank you. You're all set! May I have your first name?",
        goal_reached: true,
        captured: { email: "jo@example.com" },
      },
    },
    {
      name: "a goal needing email and time is reached when the second one comes",
      message: "Friday at 10am",
      agent: { goal: "Book a call and get their email", captureFields: ["email", "appointment_time"] },
      known: { email: "jo@example.com" },
      expect: { goal_reached: true, captured: { appointment_time: "Friday at 10am" } },
    },
    {
      name: "any other goal: high intent and positive",
      message: "Yes please, sign me up!",
      agent: { goal: "Sign up for the spring promotion" },
      expect: { reply: "Great, you're all set!", intent: "high", sentiment: "positive", goal_reached: true },
    },
    {
      name: "high intent without the positive is not enough",
      message: "sign me up",
      agent: { goal: "Sign up for the spring promotion" },
      expect: { intent: "high", sentiment: "neutral", goal_reached: false },
    },
    {
      name: "a name given is thanked and the next field asked",
      message: "my name is bob smith",
      agent: { captureFields: ["first_name", "last_name", "email"] },
      expect: {
        reply: "Thank you. What's the best email to reach you?",
        captured: { first_name: "Bob", last_name: "Smith" },
        goal_reached: false,
      },
    },
  ];
  for (const row of rows)
    test(row.name, () => expect(ask(row.message, row.agent, row.known)).toMatchObject(row.expect));

  test("only the contact's messages after the agent's last one are read", () => {
    const answer = ask("What are your hours?", { captureFields: ["email"] }, {}, [
      { role: "contact", text: "my email is old@example.com, this is a scam" },
    ]);
    expect(answer).toMatchObject({ captured: {}, sentiment: "neutral" });
  });

  test("several messages after the agent's last one are read together", () => {
    const answer = offlineAnswer({
      agent: { ...AGENT, captureFields: ["email", "zip"] },
      thread: [
        { role: "agent", text: OPENING },
        { role: "contact", text: "ok" },
        { role: "contact", text: "my email is jo@example.com" },
        { role: "contact", text: "and zip 94110" },
      ],
      known: {},
    });
    expect(answer.captured).toEqual({ email: "jo@example.com", zip: "94110" });
  });
});

describe("guardrails keep their topic out of replies", () => {
  const rows: { name: string; guardrails: string[]; message: string; reply: string }[] = [
    {
      name: "no guardrail: the price is answered",
      guardrails: [],
      message: "How much is a repair?",
      reply: "Repairs start at $250.",
    },
    {
      name: "never discuss pricing: no price sentence, and the team will answer",
      guardrails: ["Never discuss pricing."],
      message: "How much is a repair?",
      reply:
        "That's something our team will need to answer directly. What day and time work best for your free roof inspection?",
    },
    {
      name: "do not mention the warranty",
      guardrails: ["Do not mention the warranty"],
      message: "What's the warranty on a new roof?",
      reply:
        "That's something our team will need to answer directly. What day and time work best for your free roof inspection?",
    },
    {
      name: "a guardrail on another topic changes nothing",
      guardrails: ["Avoid talking about competitors"],
      message: "What's the warranty?",
      reply: "Every roof comes with a 10-year workmanship warranty.",
    },
  ];
  for (const { name, guardrails, message, reply } of rows)
    test(name, () => {
      const answer = ask(message, { guardrails });
      expect(answer.reply).toBe(reply);
      if (guardrails.length > 0 && !name.includes("another")) expect(answer.confidence).toBeLessThan(0.5);
    });
});

describe("handoff: only when the contact asks for a person", () => {
  const rows: { message: string; handoff: EngineAnswer["handoff"] }[] = [
    { message: "Can I talk to a real person?", handoff: { reason: "requested" } },
    { message: "I want to speak with a human", handoff: { reason: "requested" } },
    { message: "representative", handoff: { reason: "requested" } },
    { message: "agent please", handoff: { reason: "requested" } },
    { message: "I don't need to talk to a person, what are your hours?", handoff: null },
    { message: "This is a scam, leave me alone", handoff: null },
    { message: "Do you offer financing?", handoff: null },
  ];
  for (const { message, handoff } of rows)
    test(JSON.stringify(message), () => {
      const answer = ask(message);
      expect(answer.handoff).toEqual(handoff);
      if (handoff) expect(answer.reply).toBe("Of course, I'll have someone from our team reach out to you.");
    });

  test("a negative message gets an apology and no push (the server decides the handoff)", () => {
    expect(ask("This is a scam, leave me alone")).toEqual({
      reply: "I apologize for the trouble.",
      intent: "none",
      sentiment: "negative",
      confidence: 0.3,
      goal_reached: false,
      captured: {},
      handoff: null,
    });
  });
});

describe("follow-up: the agent spoke last", () => {
  test("a check-in and the next step, varied by how many times the agent followed up", () => {
    const thread: EngineTurn[] = [
      { role: "agent", text: OPENING },
      { role: "contact", text: "maybe" },
      { role: "agent", text: "Let me know!" },
    ];
    const first = offlineAnswer({ agent: AGENT, thread, known: {} });
    const second = offlineAnswer({
      agent: AGENT,
      thread: [...thread, { role: "agent", text: first.reply }],
      known: {},
    });
    expect(first).toMatchObject({
      reply: "Following up on my last message. What day and time work best for your free roof inspection?",
      confidence: 1,
      handoff: null,
    });
    expect(second.reply).toBe(
      "Following up once more. What day and time work best for your free roof inspection?",
    );
  });
});

describe("determinism and the engine object", () => {
  const input: EngineInput = {
    agent: { ...AGENT, captureFields: ["email", "appointment_time"], creativity: "high", tone: "friendly" },
    thread: [
      { role: "agent", text: OPENING },
      { role: "contact", text: "How much is a repair? Thursday at 2pm works, jo@example.com" },
    ],
    known: {},
  };

  test("the same input twice gives the same answer", () => {
    expect(offlineAnswer(structuredClone(input))).toEqual(offlineAnswer(structuredClone(input)));
  });

  test("the same answer after the knowledge index was evicted from its cache", () => {
    const before = offlineAnswer(input);
    for (let i = 0; i < 60; i++)
      offlineAnswer({ ...input, agent: { ...input.agent, knowledge: `${KNOWLEDGE}\nFact ${i}.` } });
    expect(offlineAnswer(input)).toEqual(before);
  });

  test("offlineEngine is named offline and answers what offlineAnswer answers", async () => {
    expect(offlineEngine.name).toBe("offline");
    expect(await offlineEngine.answer(input)).toEqual(offlineAnswer(input));
  });

  test("empty knowledge and an empty name still answer", () => {
    const answer = offlineAnswer({
      agent: { ...AGENT, knowledge: "", name: "", goal: null },
      thread: [{ role: "contact", text: "What are your hours?" }],
      known: {},
    });
    expect(answer).toMatchObject({ reply: "I don't have that information right now.", confidence: 0.1 });
  });
});

describe("answers from the system prompt's and the goal's facts as well as knowledge", () => {
  const SALE_PROMPT = `You are Sam, the assistant of Pedal Bikes. Be brief and friendly.
The spring sale takes 20% off every e-bike until May 31.
Free delivery within 10 miles of the shop.
Never discuss competitors.`;
  const rows: { name: string; agent: Partial<EngineAgent>; message: string; reply: RegExp }[] = [
    {
      name: "a fact of the prompt answers, with no knowledge",
      agent: { systemPrompt: SALE_PROMPT, knowledge: "", goal: null },
      message: "How long does the spring sale last?",
      reply: /20% off every e-bike until May 31/,
    },
    {
      name: "another fact of the prompt",
      agent: { systemPrompt: SALE_PROMPT, knowledge: "", goal: null },
      message: "Is there free delivery?",
      reply: /Free delivery within 10 miles/,
    },
    {
      name: "the goal's details after its colon",
      agent: {
        systemPrompt: "You are Sam.",
        knowledge: "",
        goal: "Sell the winter deal: helmets are $25 this week",
      },
      message: "How much are helmets?",
      reply: /helmets are \$25 this week/,
    },
    {
      name: "the prompt's instructions are never an answer",
      agent: { systemPrompt: SALE_PROMPT, knowledge: "", goal: null },
      message: "Who are you and are you brief?",
      reply: /^(?!.*You are Sam)(?!.*Be brief)/,
    },
  ];
  for (const row of rows)
    test(row.name, () => {
      expect(ask(row.message, row.agent).reply).toMatch(row.reply);
    });
});
