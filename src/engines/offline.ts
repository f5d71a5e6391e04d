/**
 * The built-in offline agent engine (API.md §6.3): what answers when LLM_BASE_URL is not set.
 * Pure and deterministic (no clock, no randomness, no I/O): the same input gives the same answer.
 *
 * - Opening (`opening`, or an empty thread): the agent's greeting, else a short opener from its
 *   name and goal.
 * - A reply answers the contact's messages after the agent's last one: the sentences that best
 *   match them (token overlap, IDF-weighted) from the knowledge and the facts the system prompt and
 *   the goal state (instructions such as "You are …" or "Be brief" left out), else a step toward
 *   the goal (ask for a missing capture field, or ask the goal's question) with low confidence.
 * - A thread where the agent spoke last (a follow-up) gets a short check-in and the next step.
 * - Lexicon sentiment, phrase intent, pattern capture (email, phone, ZIP, dates and times, names,
 *   `<field> is X`), guardrail topics kept out of replies, `agent.maxLength` respected.
 *
 * The knowledge text is split and indexed once and kept in a small bounded cache keyed by the text,
 * so an agent's repeated answers do not tokenise it again.
 */
import {
  type AgentEngine,
  type EngineAgent,
  type EngineAnswer,
  type EngineInput,
  type Intent,
  type Sentiment,
  TONES,
  type Tone,
} from "./llm";

// ————————————————————————————————————————————————————————————————— words and terms

/** A word list written as one space-separated string. */
const wordList = (list: string) => list.split(" ");

/** Lowercase words of `text`: letters and digits, apostrophes dropped so "don't" is "dont". */
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/['’]/g, "")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);
}

/** Drops one of a doubled final consonant left by a suffix ("shipp" → "ship", not "bill"). */
function undouble(word: string): string {
  return word.length > 2 && /([b-df-hj-km-np-rtv-z])\1$/.test(word) ? word.slice(0, -1) : word;
}

/**
 * Light stemming, enough for plural and tense variants to meet: -ies → -y, -es after sibilants,
 * -s, -ing, -ed, then a final -e ("prices", "priced", "pricing" and "price" all give "pric").
 * Only needs to be consistent between the knowledge and the question, not linguistically right.
 */
function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:ch|sh|ss|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith("ed")) w = undouble(w.slice(0, -2));
  if (w.length > 3 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

/**
 * Words that say nothing about a topic: function words, chat filler ("hey", "guys", "please"),
 * generic service verbs ("offer", "provide") and agreement words. Without them a question like
 * "Do you offer financing?" would match any sentence with "offer" in it.
 */
const STOPWORDS = new Set(
  wordList(
    "a about above after again all also am an and any anything are as at be been before being below between both " +
      "but by can cannot could did do does doing done down during each either else even ever every few for from " +
      "further get gets getting got had has have having he her here hers him his how i id if ill im in into is isnt " +
      "it its ive just know let lets like may me might more most much must my myself need needs no nor not now of " +
      "off on once one only or other our ours out over own please quite really right same say see she should so " +
      "some something such tell than that thats the their them then there these they thing things this those " +
      "though through thus to too under until up us very via want wanted was way we well were what whats when " +
      "which while who whom whose why will with would yeah yes yet you your youre yours u ur hi hello hey yo guys " +
      "thanks thank thx ty sure cool ok okay great good nice awesome perfect interested interest wondering wonder " +
      "question questions quick ask asking offer offers provide provides sell sells carry accept accepts help " +
      "available availability dont doesnt didnt cant wont someone anyone since because per every each within " +
      "fine alright etc work works take takes",
  ),
);

/** Day words: #hours, and also kept as themselves to tell "Sunday: closed" from "Open Mon–Fri". */
const DAY_WORDS = new Set(
  wordList(
    "monday tuesday wednesday thursday friday saturday sunday weekend weekends weekday weekdays today tomorrow tonight",
  ),
);

/**
 * Small concept classes: words that ask about the same thing meet under one term, so "How much
 * is it?" finds "Plans start at $49", "When do you open?" finds the hours and "Where are you
 * located?" finds the address. A word and its stem both map to the concept; the `#` keeps concepts
 * apart from real words.
 */
const CONCEPT_WORDS: Readonly<Record<string, readonly string[]>> = {
  "#price": wordList(
    "price prices pricing priced cost costs fee fees charge charges rate rates quote expensive cheap afford affordable dollars",
  ),
  "#hours": [...wordList("hour hours open opens close closes closed time times"), ...DAY_WORDS],
  "#where": wordList(
    "where located location locations address directions situated street avenue road boulevard suite",
  ),
  "#book": wordList("book booking schedule scheduling appointment appointments reserve reservation"),
  "#contact": wordList("phone call email reach contact"),
};
const CONCEPTS = new Map<string, string>();
for (const [concept, words] of Object.entries(CONCEPT_WORDS))
  for (const word of words) {
    CONCEPTS.set(word, concept);
    CONCEPTS.set(stem(word), concept);
  }

/**
 * The topic terms of a text, in order of first appearance: concept or stem of every word that is
 * not a stopword, a number or a single letter. "how much" counts as a price question. `literal`,
 * when given, also gets the day words behind #hours ("sunday"), so that among the sentences about
 * hours the one that names the day asked about wins.
 */
function termsOf(text: string, literal?: Set<string>): string[] {
  const words = wordsOf(text);
  const terms: string[] = [];
  const seen = new Set<string>();
  const add = (term: string) => {
    if (!seen.has(term)) {
      seen.add(term);
      terms.push(term);
    }
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === "much" && words[i - 1] === "how") {
      add("#price");
      continue;
    }
    const concept = CONCEPTS.get(word);
    if (concept) {
      add(concept);
      if (DAY_WORDS.has(word)) literal?.add(stem(word));
      continue;
    }
    if (word.length < 2 || STOPWORDS.has(word) || SENTIMENT_WORDS.has(word) || /\d/.test(word)) continue;
    const stemmed = stem(word);
    add(CONCEPTS.get(stemmed) ?? stemmed);
  }
  return terms;
}

// ————————————————————————————————————————————————————————————————— knowledge index

interface KnowledgeSentence {
  /** As written, with a final period added when it had no end mark (bullets). */
  text: string;
  terms: Set<string>;
  /** Its day words ("sunday"): the sentence that names the day asked about wins a tie on #hours. */
  literal: Set<string>;
  /** Sum of the IDF of its terms: a focused sentence wins a tie over a long one. */
  weight: number;
}

interface KnowledgeIndex {
  sentences: KnowledgeSentence[];
  idf: Map<string, number>;
  /** term → indexes of the sentences that have it. */
  postings: Map<string, number[]>;
  /** Weight of a question term the knowledge never mentions: that of the rarest known term. */
  unknownWeight: number;
}

/** Words before a period that do not end a sentence ("St. Louis", "9 a.m. to 5 p.m."). */
const ABBREVIATIONS = new Set(
  wordList(
    "mr mrs ms dr st ave blvd rd ln inc ltd co corp jr sr vs etc e.g i.e a.m p.m am pm approx no tel ext mt ft " +
      "apt ste jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun",
  ),
);
const BULLET = /^(?:[-*•·‣▪◦–—]|\d{1,3}[.)])\s+/;
const SENTENCE_BREAK = /[.!?]+["')\]]*\s+/g;

/** The sentences of one line: breaks at an end mark and space, unless an abbreviation ends there. */
function sentencesOfLine(line: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const match of line.matchAll(SENTENCE_BREAK)) {
    const end = match.index + match[0].trimEnd().length;
    const before = line.slice(start, match.index + 1);
    const lastWord = (before.match(/(\S+)$/)?.[1] ?? "").toLowerCase().replace(/\.+$/, "");
    if (match[0].startsWith(".") && match[0].trim() === "." && ABBREVIATIONS.has(lastWord)) continue;
    out.push(line.slice(start, end).trim());
    start = match.index + match[0].length;
  }
  const rest = line.slice(start).trim();
  if (rest) out.push(rest);
  return out.filter((sentence) => /[\p{L}\p{N}]/u.test(sentence));
}

/**
 * Splits knowledge into sentences: lines, bullets (marker dropped), then end marks. A short line
 * ending in ":" (or a markdown heading) is a heading: not answered on its own, but its words count
 * for the lines under it (until a blank line, or a plain line after its bullets), so "Hours:" then
 * "- Mon–Fri 8–6" answers "hours?".
 */
function indexKnowledge(knowledge: string): KnowledgeIndex {
  const sentences: KnowledgeSentence[] = [];
  let heading: string[] = [];
  let bulletsSeen = false;
  for (const raw of knowledge.split(/\r?\n/)) {
    let line = raw.trim();
    if (!line) {
      heading = [];
      continue;
    }
    const bullet = BULLET.test(line);
    if (bullet) line = line.replace(BULLET, "");
    if (/^#{1,6}\s/.test(line) || (!bullet && line.endsWith(":") && line.split(/\s+/).length <= 8)) {
      heading = termsOf(line);
      bulletsSeen = false;
      continue;
    }
    // A plain line after a heading's bullets is back in the body.
    if (bullet) bulletsSeen = true;
    else if (bulletsSeen) heading = [];
    for (const sentence of sentencesOfLine(line)) {
      const literal = new Set<string>();
      const terms = new Set([...termsOf(sentence, literal), ...heading]);
      if (terms.size === 0) continue;
      const text = /[.!?]["')\]]*$/.test(sentence) ? sentence : `${sentence}.`;
      sentences.push({ text, terms, literal, weight: 0 });
    }
  }
  const postings = new Map<string, number[]>();
  sentences.forEach((sentence, i) => {
    for (const term of sentence.terms) {
      const list = postings.get(term);
      if (list) list.push(i);
      else postings.set(term, [i]);
    }
  });
  const n = sentences.length;
  const idf = new Map<string, number>();
  for (const [term, list] of postings) idf.set(term, Math.log(1 + n / list.length));
  for (const sentence of sentences) {
    let weight = 0;
    for (const term of sentence.terms) weight += idf.get(term) ?? 0;
    sentence.weight = weight;
  }
  return { sentences, idf, postings, unknownWeight: Math.log(1 + Math.max(n, 1)) };
}

/** Indexed knowledge texts, least recently used first (a Map keeps insertion order). */
const indexCache = new Map<string, KnowledgeIndex>();
/** Knowledge texts kept indexed: one per active agent in practice; 50 × 20 kB at most. */
const INDEX_CACHE_SIZE = 50;

function knowledgeIndex(knowledge: string): KnowledgeIndex {
  const cached = indexCache.get(knowledge);
  if (cached) {
    indexCache.delete(knowledge);
    indexCache.set(knowledge, cached);
    return cached;
  }
  const index = indexKnowledge(knowledge);
  if (indexCache.size >= INDEX_CACHE_SIZE) indexCache.delete(indexCache.keys().next().value as string);
  indexCache.set(knowledge, index);
  return index;
}

/** Below this share of the question's weight covered, the knowledge does not answer it. */
const MATCH_THRESHOLD = 0.5;
/** A second sentence must cover at least this share of the question that the first leaves out. */
const SECOND_GAIN = 0.2;

interface KnowledgeMatch {
  /** Indexes of the chosen sentences (one or two), in document order. */
  picked: number[];
  /** Index of the best sentence (-1 when none). */
  best: number;
  /** Share of the question's term weight the chosen sentences cover, 0..1. */
  coverage: number;
}

const NO_MATCH: KnowledgeMatch = Object.freeze({ picked: [], best: -1, coverage: 0 });

/**
 * The best one or two sentences for the question's terms. A sentence's score is the summed IDF of
 * the question terms it has; coverage divides by the summed weight of all question terms (unknown
 * ones weigh as much as the rarest known one, so a question about something absent stays
 * uncovered). Ties go to the sentence naming the day asked about, then the more focused sentence,
 * then the earlier one. A second sentence is taken when the question has parts and it covers a
 * fifth or more of the question that the first does not, or when it is the first one's neighbour
 * scoring as well (the rest of the same answer).
 */
function matchKnowledge(
  index: KnowledgeIndex,
  query: string[],
  options: {
    /** The question's day words (see termsOf). */
    literal: ReadonlySet<string>;
    /** Sentences the guardrails keep out. */
    excluded: ReadonlySet<number>;
    /** The question has parts ("hours and address?"): a second sentence may answer another part. */
    parts: boolean;
  },
): KnowledgeMatch {
  const { literal, excluded } = options;
  if (query.length === 0 || index.sentences.length === 0) return NO_MATCH;
  const weights = query.map((term) => index.idf.get(term) ?? index.unknownWeight);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const score = new Map<number, number>();
  query.forEach((term, q) => {
    for (const i of index.postings.get(term) ?? [])
      if (!excluded.has(i)) score.set(i, (score.get(i) ?? 0) + weights[q]);
  });
  if (score.size === 0) return NO_MATCH;
  const literalOverlap = (i: number) => {
    let n = 0;
    for (const word of literal) if (index.sentences[i].literal.has(word)) n++;
    return n;
  };
  const better = (a: number, b: number) => {
    const sa = score.get(a) ?? 0;
    const sb = score.get(b) ?? 0;
    if (Math.abs(sa - sb) > 1e-9) return sa > sb;
    const la = literalOverlap(a);
    const lb = literalOverlap(b);
    if (la !== lb) return la > lb;
    const da = sa / index.sentences[a].weight;
    const db = sb / index.sentences[b].weight;
    if (Math.abs(da - db) > 1e-9) return da > db;
    return a < b;
  };
  let first = -1;
  for (const i of score.keys()) if (first < 0 || better(i, first)) first = i;
  const covered = (i: number) => query.map((term) => index.sentences[i].terms.has(term));
  const firstCovers = covered(first);
  let second = -1;
  let secondGain = 0;
  for (const i of options.parts ? score.keys() : []) {
    if (i === first) continue;
    const gain = covered(i).reduce((sum, has, q) => sum + (has && !firstCovers[q] ? weights[q] : 0), 0);
    if (gain < SECOND_GAIN * total) continue;
    if (gain > secondGain + 1e-9 || (Math.abs(gain - secondGain) <= 1e-9 && better(i, second))) {
      second = i;
      secondGain = gain;
    }
  }
  if (second < 0) {
    for (const neighbour of [first - 1, first + 1])
      if ((score.get(neighbour) ?? 0) >= (score.get(first) ?? 0) - 1e-9) {
        second = neighbour;
        break;
      }
  }
  const picked = second >= 0 ? [first, second].sort((a, b) => a - b) : [first];
  let matched = 0;
  query.forEach((term, q) => {
    if (picked.some((i) => index.sentences[i].terms.has(term))) matched += weights[q];
  });
  return { picked, best: first, coverage: total > 0 ? matched / total : 0 };
}

// ————————————————————————————————————————————————————————————————— what the agent answers from

/**
 * A system prompt's sentences that instruct the agent rather than state a fact ("You are Maya",
 * "Be brief", "Never discuss pricing", "If they ask …"): kept out of the answers.
 */
const INSTRUCTION =
  /^(?:you\b|you're\b|your\b|be\b|act\b|always\b|never\b|don'?t\b|do not\b|avoid\b|keep\b|only\b|if\b|when\b|use\b|answer\b|reply\b|respond\b|ask\b|help\b|try\b|make sure\b|remember\b|please\b|stay\b|speak\b|write\b|sound\b|the assistant\b|as an?\b)/i;

/** The prompt's statements of fact, one a line (instructions dropped). */
function factsOf(text: string): string[] {
  return text
    .split(/\r?\n|(?<=[.!?])\s+(?=[A-Z0-9])/)
    .map((sentence) => sentence.trim().replace(/^[-*•]\s*/, ""))
    .filter((sentence) => sentence.length > 0 && !INSTRUCTION.test(sentence));
}

/**
 * The goal's facts: what follows a colon, or a sentence with a figure in it ("Sell the spring
 * sale: 20% off every bike until May 31" → "20% off every bike until May 31"). The goal's aim
 * itself ("Get the contact to book a call") is not an answer; the goal's question asks for it.
 */
function goalFacts(goal: string | null): string[] {
  if (!goal) return [];
  return factsOf(goal)
    .map((sentence) => (sentence.includes(":") ? sentence.slice(sentence.indexOf(":") + 1).trim() : sentence))
    .filter((sentence) => /\d|[$€£%]/.test(sentence));
}

/**
 * What the agent answers from: its knowledge, then the facts its system prompt and goal state (a
 * prompt that holds the sale's details answers questions about the sale, as a model would).
 */
function answerSource(agent: EngineAgent): string {
  return [agent.knowledge, ...factsOf(agent.systemPrompt), ...goalFacts(agent.goal)]
    .filter((part) => part.trim() !== "")
    .join("\n");
}

// ————————————————————————————————————————————————————————————————— guardrails

const GUARDRAIL_RULE =
  /\b(?:never|dont|do not|avoid|must not|mustnt|should not|shouldnt|cannot|cant|no)\s+(.+)/;
/** Verbs and fillers after "never …" that are not the topic ("never discuss pricing" → pricing). */
const GUARDRAIL_VERBS = new Set(
  (
    "discuss mention talk bring reveal share give quote promise disclose comment speculate make use send " +
    "answer respond reply tell provide offer state guarantee specific exact related regarding topic topics " +
    "information info detail details customer contact ever"
  )
    .split(" ")
    .map((word) => CONCEPTS.get(word) ?? stem(word))
    .filter((term) => term !== "#price" && term !== "#contact"),
);

/**
 * Topic terms the guardrails forbid, best effort: the words after "never / don't / do not / avoid"
 * less the verb ("never discuss pricing", "do not mention competitors" → #price, competitor).
 */
function forbiddenTerms(guardrails: readonly string[]): Set<string> {
  const forbidden = new Set<string>();
  for (const rule of guardrails) {
    const match = rule.toLowerCase().replace(/['’]/g, "").match(GUARDRAIL_RULE);
    if (!match) continue;
    for (const term of termsOf(match[1])) if (!GUARDRAIL_VERBS.has(term)) forbidden.add(term);
  }
  return forbidden;
}

const MONEY = /[$€£]\s?\d/;

/** Sentences the guardrails keep out of replies (a forbidden price topic also drops any amount). */
function excludedSentences(index: KnowledgeIndex, forbidden: Set<string>): Set<number> {
  const excluded = new Set<number>();
  if (forbidden.size === 0) return excluded;
  for (const term of forbidden) for (const i of index.postings.get(term) ?? []) excluded.add(i);
  if (forbidden.has("#price"))
    index.sentences.forEach((sentence, i) => {
      if (MONEY.test(sentence.text)) excluded.add(i);
    });
  return excluded;
}

// ————————————————————————————————————————————————————————————————— phrase tables

type PhraseTable<T> = Map<string, { words: string[]; value: T }[]>;

/** Phrases keyed by their first word, longest first, for a left-to-right longest-match scan. */
function phraseTable<T>(entries: Iterable<[string, T]>): PhraseTable<T> {
  const table: PhraseTable<T> = new Map();
  for (const [phrase, value] of entries) {
    const words = wordsOf(phrase);
    const list = table.get(words[0]) ?? [];
    list.push({ words, value });
    list.sort((a, b) => b.words.length - a.words.length);
    table.set(words[0], list);
  }
  return table;
}

const NEGATORS = new Set(
  wordList(
    "not no never dont doesnt didnt isnt wasnt arent werent wont cant cannot couldnt wouldnt shouldnt hardly " +
      "neither nor without aint",
  ),
);

interface PhraseHit<T> {
  value: T;
  /** A negator stands within three words before it, in the same clause. */
  negated: boolean;
}

/**
 * Phrases of `table` found in `text`, clause by clause (a comma or end mark stops a negation:
 * "No, I love it" is not negated), each word used by one phrase at most.
 */
function findPhrases<T>(text: string, table: PhraseTable<T>): PhraseHit<T>[] {
  const hits: PhraseHit<T>[] = [];
  for (const clause of text.split(/[.,;:!?\n]+/)) {
    const words = wordsOf(clause);
    for (let i = 0; i < words.length; i++) {
      const candidates = table.get(words[i]);
      if (!candidates) continue;
      const found = candidates.find(({ words: phrase }) => phrase.every((word, k) => words[i + k] === word));
      if (!found) continue;
      const negated =
        !NEGATORS.has(found.words[0]) &&
        words.slice(Math.max(0, i - 3), i).some((word) => NEGATORS.has(word));
      hits.push({ value: found.value, negated });
      i += found.words.length - 1;
    }
  }
  return hits;
}

// ————————————————————————————————————————————————————————————————— sentiment

/** A weight at or below this decides alone: "thanks, but this is a scam" is negative. */
const STRONG_NEGATIVE = -3;

/**
 * Sentiment lexicon: weight per word or phrase (phrases win over their words: "no thanks" is not
 * "thanks"). Negated, a positive counts against ("not good"), a negative counts +0.5 ("not bad":
 * neutral alone, positive with a "thanks"). Sum ≥ 1 is positive, ≤ -1 negative; a strong negative
 * (-3: threats, abuse, "stop texting") not negated makes the message negative whatever else it says.
 */
const SENTIMENT_LEXICON: readonly [number, string][] = [
  [
    1,
    "great, thanks, thank, thx, love, awesome, perfect, excellent, amazing, wonderful, fantastic, good, nice, " +
      "cool, glad, happy, appreciate, helpful, interested, excited, yes, yay",
  ],
  [2, "yes please, sounds good, sounds great, looks good, love it"],
  [
    -1,
    "bad, angry, mad, upset, annoyed, annoying, terrible, awful, horrible, worst, rude, useless, ridiculous, " +
      "disappointed, disappointing, frustrated, frustrating, spam, stupid, waste, sucks, unhappy, complaint, " +
      "damn, no thanks, no thank you",
  ],
  [-2, "not interested, hate, shit"],
  [
    STRONG_NEGATIVE,
    "stop texting, stop messaging, stop contacting, leave me alone, report you, wtf, scam, scammer, scammers, " +
      "fraud, lawsuit, sue, lawyer, attorney, harassment, harassing, fuck, fucking",
  ],
];
const SENTIMENT_ENTRIES = SENTIMENT_LEXICON.flatMap(([weight, phrases]) =>
  phrases.split(", ").map((phrase): [string, number] => [phrase, weight]),
);
const SENTIMENT_PHRASES = phraseTable(SENTIMENT_ENTRIES);
/** Single lexicon words: they carry feeling, not topic, so questions are not matched on them. */
const SENTIMENT_WORDS = new Set(SENTIMENT_ENTRIES.map(([phrase]) => phrase).filter((p) => !p.includes(" ")));
const POSITIVE_EMOJI = ["😊", "🙂", "😀", "😃", "😄", "👍", "❤", "🙏", "🎉", "😍"];
const NEGATIVE_EMOJI = ["😡", "🤬", "😠", "👎", "🖕"];

/** Lexicon sentiment of a contact's text (see SENTIMENT_LEXICON for the rule). */
export function sentimentOf(text: string): Sentiment {
  let score = 0;
  let strong = false;
  for (const { value, negated } of findPhrases(text, SENTIMENT_PHRASES)) {
    if (!negated) {
      score += value;
      if (value <= STRONG_NEGATIVE) strong = true;
    } else score += value > 0 ? -value : 0.5;
  }
  for (const emoji of POSITIVE_EMOJI) if (text.includes(emoji)) score += 1;
  for (const emoji of NEGATIVE_EMOJI) if (text.includes(emoji)) score -= 1;
  if (strong || score <= -1) return "negative";
  return score >= 1 ? "positive" : "neutral";
}

// ————————————————————————————————————————————————————————————————— intent

/** A decline caps the message's intent at `none` unless a high signal is also there. */
const DECLINE = "decline";

/**
 * Buying or meeting intent by phrase; the strongest signal in the text wins. A signal with a
 * negator within three words before it ("I don't want to buy") does not count.
 *
 * | level   | phrases                                                                                   |
 * |---------|-------------------------------------------------------------------------------------------|
 * | high    | sign me up, sign up, i want to buy, id like to buy, ready to, lets do it, book (me/it), booking, |
 * |         | schedule a/an/me/it, to schedule, set up a call / an appointment, call me, how do i pay,      |
 * |         | purchase, buy, place an order, ill take it, where do i sign, count me in, im in, yes please,  |
 * |         | get started                                                                               |
 * | medium  | price, pricing, how much, cost, quote, estimate, interested, appointment, availability,     |
 * |         | available, demo, trial, discount, financing, payment plan, sounds good                    |
 * | low     | tell me more, more info, more information, details, learn more, maybe, curious,           |
 * |         | how does it work, what do you offer, send me                                              |
 * | decline | not interested, no thanks, no thank you, not now, maybe later, stop texting, leave me alone, |
 * |         | unsubscribe, dont contact                                                                 |
 *
 * Greetings, thanks and empty text match nothing: `none`.
 */
const INTENT_TABLE: readonly [Intent | typeof DECLINE, string][] = [
  [
    "high",
    "sign me up, sign up, i want to buy, id like to buy, want to buy, ready to, lets do it, book, book me, " +
      "book it, booking, schedule a, schedule an, schedule me, schedule it, to schedule, lets schedule, " +
      "set up a call, set up an appointment, call me, how do i pay, how can i pay, purchase, buy, " +
      "place an order, ill take it, where do i sign, count me in, im in, yes please, get started",
  ],
  [
    "medium",
    "price, prices, pricing, how much, cost, costs, quote, estimate, interested, appointment, availability, " +
      "available, demo, trial, discount, financing, payment plan, sounds good",
  ],
  [
    "low",
    "tell me more, more info, more information, details, learn more, maybe, curious, how does it work, " +
      "what do you offer, send me",
  ],
  [
    DECLINE,
    "not interested, no thanks, no thank you, not now, maybe later, stop texting, stop messaging, " +
      "leave me alone, unsubscribe, dont contact",
  ],
];
const INTENT_PHRASES = phraseTable(
  INTENT_TABLE.flatMap(([level, phrases]) =>
    phrases.split(", ").map((phrase): [string, Intent | typeof DECLINE] => [phrase, level]),
  ),
);
const INTENT_RANK: Record<Intent, number> = { none: 0, low: 1, medium: 2, high: 3 };

/** Buying or meeting intent of a contact's text (see INTENT_TABLE). */
export function intentOf(text: string): Intent {
  let best: Intent = "none";
  let declined = false;
  for (const { value, negated } of findPhrases(text, INTENT_PHRASES)) {
    if (value === DECLINE) declined = true;
    else if (!negated && INTENT_RANK[value] > INTENT_RANK[best]) best = value;
  }
  return declined && best !== "high" ? "none" : best;
}

/** Plain agreement ("yes", "sure", "sounds good"; not a bare "ok"): to the goal's question it is a high intent. */
const AFFIRMATIVE =
  /^\s*(?:yes|yeah|yea|yep|yup|sure|absolutely|definitely|of course|sounds good|sounds great|lets do it|please do|that works|works for me|why not|y)\b/;

/** A question: a question mark, or a line that starts like one ("how much is it"). */
const QUESTION =
  /\?|(?:^|\n)\s*(?:what|whats|where|wheres|when|how|hows|why|who|which|do|does|did|is|are|can|could|will|would|should|may|any)\b/i;
/** A question in parts: "hours and address?", "Where are you? Open Sunday?". */
const PARTS = /\b(?:and|also|plus)\b|[?;][^?;]*\S[^?;]*[?;]?$/i;

/** A plain refusal ("no", "nope", "not now"; not "no problem"): the agent lets it be. */
const REFUSAL = /^\s*(?:no(?!\s+(?:problem|worries|doubt|rush))|nope|nah|not now|not really|maybe later)\b/;

// ————————————————————————————————————————————————————————————————— human request

/** The contact asks for a person ("can I talk to a real person?", "representative", "agent please"). */
const HUMAN_REQUEST = [
  /\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:(?:a|an|the|your|some|real|live|actual)\s+)*(?:person|human|someone|somebody|people|manager|supervisor|representative|rep|agent|owner)\b/,
  /\b(?:real|live|actual)\s+(?:person|human|people|agent)\b/,
  /\bhuman\b(?!\s+resources)/,
  /\brepresentative\b/,
  /\bagent\s*,?\s*please\b/,
  /\b(?:get|give)\s+me\s+(?:a\s+)?(?:person|human|manager|someone)\b/,
];

/** True when the contact explicitly asks for a human (not when they say they do not need one). */
export function asksForHuman(text: string): boolean {
  const plain = text.toLowerCase().replace(/['’]/g, "");
  for (const pattern of HUMAN_REQUEST) {
    const match = plain.match(pattern);
    if (!match) continue;
    const before = plain.slice(Math.max(0, (match.index ?? 0) - 24), match.index);
    if (!/\b(?:dont|do not|no need|never|not)\b[^.!?]*$/.test(before)) return true;
  }
  return false;
}

// ————————————————————————————————————————————————————————————————— capture

type FieldKind =
  | "email"
  | "phone"
  | "zip"
  | "first_name"
  | "last_name"
  | "full_name"
  | "when"
  | "date"
  | "time";

/**
 * What a capture field name asks for. `date` / `*_date` take the date part of a date-time phrase,
 * `time` the time part; other time-like names (`appointment_time`, `callback_time`, `appointment`,
 * `datetime`, …) take the whole phrase as written ("tomorrow at 3pm"). Unknown names: null.
 */
function kindOf(field: string): FieldKind | null {
  const f = field.toLowerCase();
  if (/^(?:email|e_?mail|email_address)$/.test(f)) return "email";
  if (/^(?:phone|phone_number|mobile|mobile_number|cell|cell_phone|cell_number|telephone)$/.test(f))
    return "phone";
  if (/^(?:zip|zip_code|zipcode|postal_code|postcode)$/.test(f)) return "zip";
  if (/^(?:first_name|firstname|given_name)$/.test(f)) return "first_name";
  if (/^(?:last_name|lastname|surname|family_name)$/.test(f)) return "last_name";
  if (/^(?:name|full_name|fullname|contact_name)$/.test(f)) return "full_name";
  if (f === "date" || f.endsWith("_date")) return "date";
  if (f === "time") return "time";
  if (/time|appointment|datetime|slot|when/.test(f)) return "when";
  return null;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const PHONE_US = /(?<![\d+])(?:\+?1[\s.-]?)?\(?([2-9]\d{2})\)?[\s.-]?(\d{3})[\s.-]?(\d{4})(?!\d)/g;
const PHONE_E164 = /(?<![\d+])\+[2-9](?:[\s.-]?\d){7,14}(?!\d)/g;
const ZIP = /(?<![\w$#.,/:+-])\d{5}(?:-\d{4})?(?![\w/:]|[.,-]\d)/g;
const ZIP_KEYWORD = /\b(?:zip|postal)(?:\s*code)?\s*(?:is|:|#)?\s*$/i;
const STREET_AFTER =
  /^\s+(?:[A-Za-z][\w.]*\s+){1,3}(?:st|street|ave|avenue|rd|road|blvd|boulevard|dr|drive|ln|lane|way|ct|court|pl|place|pkwy|hwy|highway)\b/i;
/** "my email is", "phone:", "zip code" just before a value: part of what the capture consumes. */
const LEAD_IN =
  /(?:\b(?:my|our|the)\s+)?\b(?:e-?mail(?:\s+address)?|(?:phone|cell|mobile)(?:\s+number)?|number|zip(?:\s*code)?|postal\s+code)\s*(?:is|:|=|-)?\s*$/i;

const MONTHS =
  "jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?";
const WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues|thurs";
const DAY_OF_MONTH = "(?:3[01]|[12]\\d|0?[1-9])(?:st|nd|rd|th)?";
const DATE = [
  "(?:the\\s+)?day\\s+after\\s+tomorrow",
  "today|tonight|tomorrow|tmrw",
  `(?:(?:this|next)\\s+)?(?:${WEEKDAYS})(?:,?\\s+(?:${MONTHS})\\.?\\s+${DAY_OF_MONTH})?`,
  "\\d{4}-(?:1[0-2]|0?[1-9])-(?:3[01]|[12]\\d|0?[1-9])",
  "(?:1[0-2]|0?[1-9])/(?:3[01]|[12]\\d|0?[1-9])(?:/(?:\\d{4}|\\d{2}))?",
  `(?:${MONTHS})\\.?\\s+${DAY_OF_MONTH}(?:,?\\s+\\d{4})?`,
  `${DAY_OF_MONTH}\\s+(?:of\\s+)?(?:${MONTHS})(?:,?\\s+\\d{4})?`,
].join("|");
const TIME =
  "(?:1[0-2]|0?[1-9])(?::[0-5]\\d)?\\s*(?:a\\.?m\\.?|p\\.?m\\.?)(?![a-z])|(?:[01]?\\d|2[0-3]):[0-5]\\d|noon|midnight";
const BARE_HOUR = "(?:1[0-2]|0?[1-9])(?![\\d:/])";
const DAYPART = "(?:in\\s+the\\s+)?(?:morning|afternoon|evening|night)";
/**
 * A date, a time, or both in either order: "tomorrow at 3pm", "Tuesday 10:30am", "12/5 at 2",
 * "2026-12-05 14:00", "3 pm", "3pm on Friday", "tomorrow morning". A bare hour counts only after a
 * date and "at" ("12/5 at 2"); a day part only after a date (so "good morning" is not a time).
 */
const WHEN = new RegExp(
  `(?<![\\w/:-])(?:(?:${DATE})(?:\\s*,?\\s*(?:(?:at|@|around|by|from)\\s*)?(?:${TIME})|\\s*,?\\s*(?:at|@|around)\\s*${BARE_HOUR}|\\s+${DAYPART})?|(?:${TIME})(?:\\s*,?\\s*(?:on\\s+)?(?:${DATE}))?)(?![\\w/])`,
  "gi",
);
const DATE_PART = new RegExp(`(?<![\\w/:-])(?:${DATE})(?![\\w/])`, "i");
const TIME_PART = new RegExp(
  `(?<![\\w/:-])(?:${TIME})(?![\\w/])|(?<=(?:\\bat|\\baround|@)\\s*)${BARE_HOUR}|${DAYPART}`,
  "i",
);

/** Name words that are not names: "I'm fine", "this is great", "call me back", "it's Tuesday". */
const NOT_NAMES = new Set(
  wordList(
    "fine good ok okay interested not here busy sure sorry ready looking going at in on so very just still a an " +
      "the glad happy well great doing trying thinking wondering calling texting writing asking home out away " +
      "done back available free no yes all also actually really afraid new with from curious confused tired bad " +
      "late early working driving about gonna kinda too always never currently only having getting hoping planning " +
      "considering retired married single over under between definitely probably maybe pretty super totally your " +
      "his her their this that it me you him them us and or but for to of by later anytime tomorrow today tonight " +
      "now asap soon when please instead again what who how why where if because aware sick down up thanks thank " +
      "monday tuesday wednesday thursday friday saturday sunday january february march april may june july august " +
      "september october november december hi hello hey nobody somebody someone everyone one human person real " +
      "agent bot robot an the",
  ),
);
/** "my name is", "my name's", "Name: …" (not "last name:"): any case is a name after these. */
const STRONG_NAME = /\bmy\s+name(?:\s+is|'s|s|\s*:)\s*|(?<![\p{L}][\s_-]*)\bname\s*(?:is|:)\s*/giu;
/** "I'm", "I am", "this is", "call me", "it's": a name only when capitalised (or the whole message). */
const WEAK_NAME = /\b(?:i\s*'?m|i\s+am|this\s+is|call\s+me|it\s*'?s)\s+/gi;
const NAME_WORD = /[\p{L}][\p{L}'-]*/uy;
const NAME_GAP = /[ \t]+/y;

const isCapitalised = (word: string) => word[0] !== word[0].toLowerCase();
/** "bob" → "Bob", "BOB" → "Bob", "o'neil" → "O'Neil", "mary-jane" → "Mary-Jane"; "McKay" stays. */
const title = (word: string) => {
  const base = word === word.toUpperCase() || word === word.toLowerCase() ? word.toLowerCase() : word;
  return base.replace(/(^|['-])(\p{L})/gu, (_, mark: string, letter: string) => mark + letter.toUpperCase());
};

interface Found {
  value: string;
  start: number;
  end: number;
}

/**
 * Name words from `from`: up to three, stopping at punctuation or a word that is not a name
 * (NOT_NAMES, stopwords, feelings, lowercase words ending like adjectives or verbs). After a weak
 * lead-in ("I'm", "this is", "call me", "it's") the name must be capitalised, and so must the words
 * after it, unless the message is only the lead-in and the name ("im bob").
 */
function nameAt(
  text: string,
  from: number,
  leadStart: number,
  weak: boolean,
): { words: string[]; end: number } {
  const words: string[] = [];
  let at = from;
  let end = from;
  while (words.length < 3) {
    if (words.length > 0) {
      NAME_GAP.lastIndex = at;
      if (!NAME_GAP.test(text)) break;
      at = NAME_GAP.lastIndex;
    }
    NAME_WORD.lastIndex = at;
    const match = NAME_WORD.exec(text);
    if (!match) break;
    const word = match[0].replace(/['-]+$/, "");
    const lower = word.toLowerCase().replace(/'/g, "");
    if (word.length < 2 || NOT_NAMES.has(lower) || STOPWORDS.has(lower) || SENTIMENT_WORDS.has(lower)) break;
    if (!isCapitalised(word) && lower.length > 4 && /(?:ing|ed|ly|ful|ous|ive|able|ible)$/.test(lower)) break;
    if (weak && words.length > 0 && isCapitalised(words[0]) && !isCapitalised(word)) break;
    words.push(word);
    at = match.index + word.length;
    end = at;
  }
  if (words.length > 0 && weak && !isCapitalised(words[0])) {
    const alone = /(?:^|\n)\s*$/.test(text.slice(0, leadStart)) && /^[\s.!,]*(?:\n|$)/.test(text.slice(end));
    if (!alone) return { words: [], end };
  }
  return { words: words.map(title), end };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Capture with where each value was found (so the answer can take the captures out of the question).
 * Masks what it took (emails, then phones, then dates and times) so a later pattern does not read
 * it again: a phone's digits are never a ZIP. The last occurrence wins (the contact's correction).
 */
function captureWithSpans(text: string, fields: readonly string[]): Map<string, Found> {
  const wanted = new Map<string, FieldKind | null>(fields.map((field) => [field, kindOf(field)]));
  const kinds = new Set(wanted.values());
  const out = new Map<string, Found>();
  let work = text.replace(/’/g, "'");
  const mask = (start: number, end: number) => {
    work = work.slice(0, start) + " ".repeat(end - start) + work.slice(end);
  };
  const leadStart = (start: number) => {
    const lead = work.slice(Math.max(0, start - 32), start).match(LEAD_IN);
    return lead ? start - lead[0].length : start;
  };
  const found = new Map<FieldKind, Found>();

  const emails = [...work.matchAll(EMAIL)];
  for (const m of emails) mask(m.index, m.index + m[0].length);
  const lastEmail = emails.at(-1);
  if (lastEmail)
    found.set("email", {
      value: lastEmail[0].toLowerCase(),
      start: leadStart(lastEmail.index),
      end: lastEmail.index + lastEmail[0].length,
    });

  const phones: Found[] = [];
  for (const m of work.matchAll(PHONE_US))
    phones.push({ value: `+1${m[1]}${m[2]}${m[3]}`, start: m.index, end: m.index + m[0].length });
  for (const p of phones) mask(p.start, p.end);
  for (const m of work.matchAll(PHONE_E164))
    phones.push({ value: `+${m[0].replace(/\D/g, "")}`, start: m.index, end: m.index + m[0].length });
  for (const p of phones) mask(p.start, p.end);
  const lastPhone = phones.sort((a, b) => a.start - b.start).at(-1);
  if (lastPhone) found.set("phone", { ...lastPhone, start: leadStart(lastPhone.start) });

  const whens = [...work.matchAll(WHEN)].map((m) => ({
    value: m[0].replace(/\s+/g, " ").trim(),
    start: m.index,
    end: m.index + m[0].length,
  }));
  for (const w of whens) mask(w.start, w.end);
  const lastWhen = whens.at(-1);
  if (lastWhen) found.set("when", lastWhen);
  for (const [kind, part] of [
    ["date", DATE_PART],
    ["time", TIME_PART],
  ] as const) {
    for (let i = whens.length - 1; i >= 0; i--) {
      const piece = whens[i].value.match(part);
      if (piece) {
        found.set(kind, { ...whens[i], value: piece[0] });
        break;
      }
    }
  }

  if (kinds.has("zip")) {
    const zips: Found[] = [];
    for (const m of work.matchAll(ZIP)) {
      const end = m.index + m[0].length;
      if (STREET_AFTER.test(work.slice(end, end + 60))) continue;
      zips.push({ value: m[0], start: m.index, end });
    }
    const keyed = zips.filter((z) => ZIP_KEYWORD.test(work.slice(Math.max(0, z.start - 20), z.start)));
    const zip = (keyed.length > 0 ? keyed : zips).at(-1);
    if (zip) found.set("zip", { ...zip, start: leadStart(zip.start) });
  }

  if (kinds.has("first_name") || kinds.has("last_name") || kinds.has("full_name")) {
    let best: { words: string[]; start: number; end: number } | null = null;
    for (const [pattern, weak] of [
      [STRONG_NAME, false],
      [WEAK_NAME, true],
    ] as const) {
      // The last name said wins; a strong lead-in ("my name is") beats any weak one.
      for (const m of work.matchAll(pattern)) {
        const { words, end } = nameAt(work, m.index + m[0].length, m.index, weak);
        if (words.length > 0) best = { words, start: m.index, end };
      }
      if (best) break;
    }
    if (best) {
      const { words, start, end } = best;
      found.set("full_name", { value: words.join(" "), start, end });
      found.set("first_name", { value: words[0], start, end });
      if (words.length > 1) found.set("last_name", { value: words.slice(1).join(" "), start, end });
    }
  }

  for (const [field, kind] of wanted) {
    const hit = kind ? found.get(kind) : undefined;
    if (hit) {
      out.set(field, hit);
      continue;
    }
    const named = kind === "first_name" || kind === "last_name" || kind === "full_name";
    if (kind !== null && !named) continue;
    // Unknown fields, and names said as "first name: Bob": "<field> is X", "<field>: X".
    const label = field
      .split(/[\s_-]+/)
      .filter(Boolean)
      .map(escapeRegExp)
      .join("[\\s_-]*");
    if (!label) continue;
    // Not after another word: "last name: Smith" is no "name: …".
    const generic = new RegExp(
      `(?<![\\p{L}][\\s_-]*)\\b(?:(?:my|our|the)\\s+)?${label}\\s*(?:is|:|=)[ \\t]*`,
      "giu",
    );
    let best: Found | null = null;
    for (const m of work.matchAll(generic)) {
      const from = m.index + m[0].length;
      if (named) {
        const { words, end } = nameAt(work, from, m.index, false);
        if (words.length > 0) best = { value: words.join(" "), start: m.index, end };
      } else {
        const value = work
          .slice(from)
          .match(/^[^\n.,;!?]{1,80}/)?.[0]
          .replace(/\s+/g, " ")
          .trim();
        if (value) best = { value, start: m.index, end: from + value.length };
      }
    }
    if (best) out.set(field, best);
  }
  return out;
}

/**
 * Values for the capture fields found in `text`, by field name; only fields listed in `fields` are
 * returned. Email (lowercased), phone (E.164: US 10-digit numbers as +1…), ZIP (5 digits or ZIP+4,
 * never digits of a phone or a longer number), names ("my name is …", "I'm …", "this is …",
 * "call me …": first_name, last_name, name / full_name), dates and times as written (see WHEN),
 * and for any other field name "<field> is X" or "<field>: X".
 */
export function captureFrom(text: string, fields: string[]): Record<string, string> {
  const captured: Record<string, string> = {};
  for (const [field, found] of captureWithSpans(text, fields)) captured[field] = found.value;
  return captured;
}

// ————————————————————————————————————————————————————————————————— goal

type GoalKind = "booking" | "email" | "phone" | "zip";

const GOAL_KINDS: readonly [GoalKind, RegExp, FieldKind[], string][] = [
  [
    "booking",
    /\b(?:book|booking|booked|schedule|scheduled|scheduling|appointment|appointments|meeting|call|demo|consultation|consult|visit|tour|reserve|reservation|inspection)\b/,
    ["when", "date", "time"],
    "appointment_time",
  ],
  ["email", /\be-?mails?\b/, ["email"], "email"],
  // The contact texts from a phone: only a goal that asks for another number needs one.
  ["phone", /\b(?:phone|mobile|cell)\s+numbers?\b/, ["phone"], "phone"],
  ["zip", /\b(?:zip|postal)\b/, ["zip"], "zip"],
];

/** Verbs a goal can start with and still read as "Would you like to …?". */
const GOAL_VERBS = new Set(
  wordList(
    "book schedule set get buy sign join register visit try start learn call talk meet come reserve order " +
      "request claim see take apply subscribe upgrade renew confirm attend download share complete finish pay " +
      "purchase enroll rsvp arrange plan switch save find chat speak grab install",
  ),
);
const COLLECT_VERBS = new Set(["collect", "capture", "gather", "obtain", "get", "ask", "confirm", "verify"]);

interface GoalPlan {
  /** What the goal needs captured: one field per kind (the agent's own field name when it has one). */
  required: string[];
  /** The question that asks for the goal ("Would you like to book a free consultation?"), or null. */
  question: string | null;
  /** What a booking is for, as the contact reads it ("your free consultation"), or null. */
  booking: string | null;
  /** The field that holds the booked date or time when the goal is a booking, else null. */
  bookingField: string | null;
  /** The goal's words, to tell whether the agent's last message asked for it. */
  terms: string[];
}

/** The goal as the contact reads it: "Get the contact to book a call" → "book a call", "their" → "your". */
function contactSideGoal(goal: string): string {
  return goal
    .trim()
    .replace(/[.!?\s]+$/, "")
    .replace(
      /^(?:to\s+)?(?:get|have|convince|encourage|persuade|help|ask|invite|make)\s+(?:the\s+)?(?:contact|lead|customer|prospect|user|client|them|him|her|people|person)\s+(?:to\s+)?/i,
      "",
    )
    .replace(/\bthe\s+(?:contact|lead|customer|prospect)['’]s\b/gi, "your")
    .replace(/\b(?:their|his or her)\b/gi, "your")
    .replace(/\b(?:them|the contact|the lead|the customer|the prospect)\b/gi, "you")
    .replace(/\bthey\b/gi, "you");
}

/** "Book a call" → "book a call", "A booked call" → "a booked call"; "I", "SEO audit" stay. */
const lowerFirst = (s: string) => (/^(?!I\b)[A-Z](?:[a-z]|\s)/.test(s) ? s[0].toLowerCase() + s.slice(1) : s);

function goalPlan(agent: EngineAgent): GoalPlan {
  const goal = agent.goal?.trim() ?? "";
  if (!goal) return { required: [], question: null, booking: null, bookingField: null, terms: [] };
  const lower = goal.toLowerCase();
  const required: string[] = [];
  const kinds: GoalKind[] = [];
  for (const [kind, pattern, fieldKinds, canonical] of GOAL_KINDS) {
    if (!pattern.test(lower)) continue;
    kinds.push(kind);
    const own = agent.captureFields.find((field) => {
      const k = kindOf(field);
      return k !== null && fieldKinds.includes(k);
    });
    required.push(own ?? canonical);
  }
  const phrase = lowerFirst(contactSideGoal(goal));
  const first = phrase.split(/\s+/)[0]?.toLowerCase() ?? "";
  let question: string;
  if (COLLECT_VERBS.has(first) && kinds.some((kind) => kind !== "booking"))
    question = fieldQuestion(required[kinds.findIndex((kind) => kind !== "booking")], null);
  else if (GOAL_VERBS.has(first)) question = `Would you like to ${phrase}?`;
  else question = `Are you interested in ${phrase}?`;
  let booking: string | null = null;
  if (kinds.includes("booking")) {
    const object = phrase.match(/^(?:book|schedule|set\s+up|arrange|reserve|plan|get)\s+(.+)$/i)?.[1];
    booking = object ? object.replace(/^(?:a|an|the)\s+/i, "your ") : null;
  }
  const bookingField = kinds.includes("booking") ? required[kinds.indexOf("booking")] : null;
  return { required, question, booking, bookingField, terms: termsOf(phrase) };
}

/** The question that asks for one capture field. */
function fieldQuestion(field: string, booking: string | null): string {
  switch (kindOf(field)) {
    case "email":
      return "What's the best email to reach you?";
    case "phone":
      return "What's the best number to reach you?";
    case "zip":
      return "What's your ZIP code?";
    case "first_name":
      return "May I have your first name?";
    case "last_name":
      return "What's your last name?";
    case "full_name":
      return "May I have your name?";
    case "date":
      return booking ? `What day works best for ${booking}?` : "What day works best for you?";
    case "time":
      return booking ? `What time works best for ${booking}?` : "What time works best for you?";
    case "when":
      return booking ? `What day and time work best for ${booking}?` : "What day and time work best for you?";
    default:
      return `Could you share your ${field.replace(/[_-]+/g, " ").trim()}?`;
  }
}

/**
 * The next step toward the goal: ask for the first missing capture field (the agent's fields in
 * order, then what the goal needs), else ask the goal's question, unless the goal is done (reached
 * now, or it needs captures that are all known): then null. No goal and nothing missing: null.
 */
function nextStep(
  agent: EngineAgent,
  plan: GoalPlan,
  has: (field: string) => boolean,
  goalDone: boolean,
): string | null {
  for (const field of [...agent.captureFields, ...plan.required])
    if (!has(field)) return fieldQuestion(field, plan.booking);
  if (goalDone || plan.required.length > 0) return null;
  return plan.question;
}

// ————————————————————————————————————————————————————————————————— wording

/** Said before a knowledge answer, by tone: short, and the same every time. */
const ANSWER_PREFIX: Record<Tone, string> = {
  friendly: "Sure! ",
  professional: "",
  casual: "Sure thing! ",
  empathetic: "Happy to help. ",
  direct: "",
};
const THANKS: Record<Tone, string> = {
  friendly: "Thanks!",
  professional: "Thank you.",
  casual: "Got it, thanks!",
  empathetic: "Thank you for sharing that.",
  direct: "Got it.",
};
const SORRY: Record<Tone, string> = {
  friendly: "I'm sorry to hear that.",
  professional: "I apologize for the trouble.",
  casual: "Sorry about that!",
  empathetic: "I understand, and I'm sorry for the frustration.",
  direct: "Understood.",
};
const CHECK_INS: Record<Tone, readonly string[]> = {
  friendly: ["Just checking in!", "Hi again!"],
  professional: ["Following up on my last message.", "Following up once more."],
  casual: ["Hey, just checking in!", "Hey again!"],
  empathetic: ["Just checking in, no pressure.", "Just checking in once more, no pressure."],
  direct: ["Following up.", "Following up again."],
};
const UNKNOWN_ANSWER = "I don't have that information right now.";
const FORBIDDEN_ANSWER = "That's something our team will need to answer directly.";
const HANDOFF_REPLY = "Of course, I'll have someone from our team reach out to you.";
const REFUSAL_REPLY = "No problem, feel free to reach out if anything changes.";
const OPEN_QUESTION = "How can I help you today?";
const GOAL_REACHED = "Great, you're all set!";
const THANKED = /\b(?:thanks|thank you|thx|ty|appreciate it)\b/;
const GREETED = /^\s*(?:hi|hello|hey|yo|good (?:morning|afternoon|evening))\b/;

/** The agent's tone; an unknown one (bad stored data) reads as friendly. */
const toneOf = (agent: EngineAgent): Tone => (TONES.includes(agent.tone) ? agent.tone : "friendly");

/** The opener when the agent has no greeting: hello by tone, the agent's name, the goal's question. */
function opener(agent: EngineAgent, plan: GoalPlan, known: Record<string, string>): string {
  const first = known.first_name?.trim();
  const to = first ? ` ${first}` : "";
  const name = agent.name.trim();
  const hello: Record<Tone, string> = {
    friendly: name ? `Hi${to}! This is ${name}.` : `Hi${to}!`,
    professional: name ? `Hello${to}, this is ${name}.` : `Hello${to}.`,
    casual: name ? `Hey${to}! ${name} here.` : `Hey${to}!`,
    empathetic: name ? `Hi${to}, this is ${name}.` : `Hi${to}.`,
    direct: name ? `Hi${to}, this is ${name}.` : `Hi${to}.`,
  };
  return `${hello[toneOf(agent)]} ${plan.question ?? OPEN_QUESTION}`;
}

/**
 * `text` cut to `max` characters: at the last sentence end that fits, else at the last word
 * boundary, else hard. A non-finite `max` means no limit.
 */
function fitLength(text: string, max: number): string {
  const trimmed = text.trim();
  if (!Number.isFinite(max) || trimmed.length <= max) return trimmed;
  const limit = Math.max(0, Math.floor(max));
  for (let i = limit - 1; i > 0; i--) {
    if (!/[.!?]/.test(trimmed[i]) || (i + 1 < trimmed.length && !/\s/.test(trimmed[i + 1]))) continue;
    // "St." and "a.m." end no sentence.
    const word =
      trimmed
        .slice(0, i)
        .match(/(\S+)$/)?.[1]
        .toLowerCase() ?? "";
    if (trimmed[i] === "." && ABBREVIATIONS.has(word)) continue;
    return trimmed.slice(0, i + 1);
  }
  const head = trimmed.slice(0, limit);
  const space = head.search(/\s\S*$/);
  const cut = space > 0 ? head.slice(0, space).replace(/[\s,;:—–-]+$/, "") : head;
  // Never end on half of a surrogate pair.
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** Joins parts, dropping the optional ones (from the end) that would not fit in `max`. */
function compose(max: number, required: string[], optional: string[] = []): string {
  const parts = [...required, ...optional].filter((part) => part.trim().length > 0);
  let keep = parts.length;
  while (keep > required.length && parts.slice(0, keep).join(" ").length > max) keep--;
  return fitLength(parts.slice(0, keep).join(" "), max);
}

const round2 = (x: number) => Math.round(Math.min(1, Math.max(0, x)) * 100) / 100;

// ————————————————————————————————————————————————————————————————— the engine

/**
 * The offline engine's answer, synchronously (offlineEngine.answer wraps it).
 *
 * Reply, in order of precedence, and its confidence:
 * 1. Opening (`opening`, or an empty thread): the greeting as set, else the opener — 1.
 * 2. The agent spoke last (a follow-up): a check-in line, varied by how many the agent already
 *    sent, and the next step — 1 (nothing to misunderstand).
 * 3. The contact asks for a person: a short acknowledgement and `handoff: {reason: "requested"}` — 0.9.
 * 4. The knowledge answers (coverage ≥ 0.5, see matchKnowledge): the one or two best sentences
 *    after the tone's prefix (an apology instead when the contact is negative), then the next step
 *    when creativity is not `low`, the agent did not just ask it and it fits — 0.1 + 0.9 × coverage,
 *    so 0.55..1 and at least 0.6 once 56 % of the question's weight is covered. A statement that
 *    gave a capture ("Tuesday at 3 works, bob@x.com") is not matched against the knowledge.
 * 5. Something was captured: thanks, "You're all set" when that reached the goal, the next step — 0.8.
 * 6. The goal was reached without a capture ("Yes please, sign me up!"): "Great, you're all set!" — 0.8.
 * 7. Negative sentiment: an apology by tone and no push — 0.3.
 * 8. A plain refusal ("no", "not now"): "No problem…" and no push — 0.3.
 * 9. Not understood: a question gets "I don't have that information right now." (or, when it is
 *    about a guardrail's topic, "That's something our team will need to answer directly.") before
 *    the next step — 0.1 + 0.2 × coverage, under 0.2. Small talk with no topic words gets a word
 *    back ("Hi!", "You're welcome!", "Great!") and the next step — 0.3.
 *
 * The next step: ask for the first capture field that is neither known nor captured now (the
 * agent's fields in order, then what the goal needs), else the goal's question.
 *
 * goal_reached: a goal that needs a capture (book, schedule, appointment, call, demo, consultation,
 * visit, tour, inspection… → a date or time; email → an email; phone number → a phone; ZIP → a ZIP)
 * is reached when every capture it needs is known or captured now and at least one was captured in
 * these messages, so it fires on the turn that completes it. A date or time inside a question the
 * knowledge answers ("are you open on Sunday?") is part of the question: neither captured nor a
 * booking. Any other goal is reached when the contact's intent is high and their sentiment positive
 * ("Yes please, sign me up!"). No goal: never.
 *
 * intent: intentOf the contact's messages, raised to high when they plainly agree ("yes", "sure",
 * "sounds good") to an agent message that asked the goal's question.
 */
export function offlineAnswer(input: EngineInput): EngineAnswer {
  const { agent, thread } = input;
  const known = input.known ?? {};
  const plan = goalPlan(agent);
  const tone = toneOf(agent);
  const max = Number.isFinite(agent.maxLength) ? agent.maxLength : Number.POSITIVE_INFINITY;

  if (input.opening || thread.length === 0) {
    const greeting = agent.greeting?.trim();
    return {
      reply: greeting ? fitLength(greeting, max) : compose(max, [opener(agent, plan, known)]),
      intent: "none",
      sentiment: "neutral",
      confidence: 1,
      goal_reached: false,
      captured: {},
      handoff: null,
    };
  }

  let lastAgent = thread.length - 1;
  while (lastAgent >= 0 && thread[lastAgent].role !== "agent") lastAgent--;
  const agentText = lastAgent >= 0 ? thread[lastAgent].text : "";
  const latest = thread.slice(lastAgent + 1).filter((turn) => turn.role === "contact");
  const has = (field: string) => Boolean(known[field]?.trim());

  if (latest.length === 0) {
    let agentTurns = 0;
    for (let i = thread.length - 1; i >= 0 && thread[i].role === "agent"; i--) agentTurns++;
    const lines = CHECK_INS[tone];
    const step = nextStep(agent, plan, has, false) ?? "Let me know if you have any questions.";
    return {
      reply: compose(max, [lines[(agentTurns - 1) % lines.length], step]),
      intent: "none",
      sentiment: "neutral",
      confidence: 1,
      goal_reached: false,
      captured: {},
      handoff: null,
    };
  }

  const text = latest.map((turn) => turn.text).join("\n");
  const sentiment = sentimentOf(text);
  let intent = intentOf(text);
  const plain = text.toLowerCase().replace(/['’]/g, "");
  if (INTENT_RANK[intent] < INTENT_RANK.high && AFFIRMATIVE.test(plain) && agentText.includes("?")) {
    const asked = termsOf(agentText);
    const goalAsked =
      plan.terms.length > 0 &&
      plan.terms.filter((term) => asked.includes(term)).length / plan.terms.length >= 0.6;
    if (goalAsked) intent = "high";
  }

  // Capture the agent's fields and what the goal needs (the answer reports the agent's fields only).
  const spans = captureWithSpans(text, [...new Set([...agent.captureFields, ...plan.required])]);
  const isTimeField = (field: string) => {
    const kind = kindOf(field);
    return kind === "when" || kind === "date" || kind === "time";
  };

  // The question is the text without what was captured ("my email is …" asks nothing about email).
  // Dates and times stay in a question: "are you open on Sunday?" asks about the hours.
  const asking = QUESTION.test(text);
  let question = text;
  for (const [field, found] of [...spans].sort((a, b) => b[1].start - a[1].start)) {
    if (asking && isTimeField(field)) continue;
    question =
      question.slice(0, found.start) + " ".repeat(found.end - found.start) + question.slice(found.end);
  }
  const literal = new Set<string>();
  const query = termsOf(question, literal);
  const index = knowledgeIndex(answerSource(agent));
  const forbidden = forbiddenTerms(agent.guardrails);
  // A statement that gave a capture ("Sure, Tuesday at 3 works, bob@x.com") asks nothing.
  const match =
    spans.size > 0 && !asking
      ? NO_MATCH
      : matchKnowledge(index, query, {
          literal,
          excluded: excludedSentences(index, forbidden),
          parts: PARTS.test(question),
        });
  const answered = match.coverage >= MATCH_THRESHOLD;
  // A date or time in a question the knowledge answers was part of the question, not a booking.
  if (answered && asking) for (const field of [...spans.keys()]) if (isTimeField(field)) spans.delete(field);

  const captured: Record<string, string> = {};
  for (const field of agent.captureFields) {
    const found = spans.get(field);
    if (found) captured[field] = found.value;
  }
  const haveNow = (field: string) => has(field) || spans.has(field);
  const goalReached =
    plan.required.length > 0
      ? plan.required.every(haveNow) && plan.required.some((field) => spans.has(field))
      : plan.question !== null && intent === "high" && sentiment === "positive";
  const step = nextStep(agent, plan, haveNow, goalReached);

  const answer = (
    reply: string,
    confidence: number,
    handoff: EngineAnswer["handoff"] = null,
  ): EngineAnswer => ({
    reply,
    intent,
    sentiment,
    confidence: round2(confidence),
    goal_reached: goalReached,
    captured,
    handoff,
  });

  if (asksForHuman(text)) return answer(compose(max, [HANDOFF_REPLY]), 0.9, { reason: "requested" });

  if (answered) {
    const sentences = match.picked.map((i) => index.sentences[i].text);
    const prefix = sentiment === "negative" ? `${SORRY[tone]} ` : ANSWER_PREFIX[tone];
    const extra = agent.creativity !== "low" && step && !agentText.includes(step) ? [step] : [];
    // The longest that fits: prefix and both sentences, both, prefix and the best one, the best one
    // (cut at a word boundary when even that is too long).
    const body = sentences.join(" ");
    const best = index.sentences[match.best].text;
    const fits = [`${prefix}${body}`, body, `${prefix}${best}`, best].find((reply) => reply.length <= max);
    return answer(compose(max, [fits ?? best], extra), 0.1 + 0.9 * match.coverage);
  }

  if (spans.size > 0) {
    const booked = plan.bookingField ? spans.get(plan.bookingField)?.value : undefined;
    const done = goalReached ? `You're all set${booked ? ` for ${booked}` : ""}!` : "";
    return answer(compose(max, [THANKS[tone]], [done, step ?? ""]), 0.8);
  }

  if (goalReached) return answer(compose(max, [GOAL_REACHED], [step ?? ""]), 0.8);

  if (sentiment === "negative") return answer(compose(max, [SORRY[tone]]), 0.3);

  if (REFUSAL.test(plain) && intent === "none" && sentiment !== "positive")
    return answer(compose(max, [REFUSAL_REPLY]), 0.3);

  if (query.length > 0) {
    // Not understood. A question gets an honest "I don't know" before the step.
    const lead = query.some((term) => forbidden.has(term)) ? FORBIDDEN_ANSWER : asking ? UNKNOWN_ANSWER : "";
    const reply = lead ? compose(max, [lead], [step ?? ""]) : compose(max, [step ?? OPEN_QUESTION]);
    return answer(reply, 0.1 + 0.2 * match.coverage);
  }

  // Small talk: a word back ("You're welcome!", "Hi!", "Great!"), then the next step.
  const back = THANKED.test(plain)
    ? "You're welcome!"
    : GREETED.test(plain)
      ? "Hi!"
      : sentiment === "positive" || intent === "high"
        ? "Great!"
        : "";
  const next = step ?? (THANKED.test(plain) ? "" : OPEN_QUESTION);
  return answer(compose(max, [back || next], back ? [next] : []), 0.3);
}

/** The built-in engine (API.md §6.3): the default when LLM_BASE_URL is not set. */
export const offlineEngine: AgentEngine = {
  name: "offline",
  async answer(input: EngineInput): Promise<EngineAnswer> {
    return offlineAnswer(input);
  },
};
