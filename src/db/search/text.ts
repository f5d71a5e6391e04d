/**
 * The text of thread search, one spelling for both databases: how a text is folded, how it splits
 * into words, and what a contact's label holds. Both indexes are written with folded text and both
 * fold the user's words the same way, so a search matches the same threads on SQLite (FTS5) and on
 * PostgreSQL (tsvector, which also runs its own `unaccent` over what it is given).
 */

import type { SQL } from "drizzle-orm";

/** A thread search: the workspace, the user's text, an inbox filter beside it, and the page. */
export interface ThreadSearch {
  workspaceId: string;
  text: string;
  where?: SQL;
  limit: number;
  offset: number;
  /** SQLite: overrides its small match set (tests run both of its paths on a small corpus). */
  smallMatchSet?: number;
}

/** Characters FTS5's unicode61 tokenizer keeps in a token (L*, N*, Co; Mn, as diacritics are removed). */
const NOT_TOKEN = /[^\p{L}\p{N}\p{Co}\p{Mn}]+/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;

/** The words of `text` as FTS5's unicode61 tokenizer splits it, as written. */
export function searchTokens(text: string): string[] {
  return text.split(NOT_TOKEN).filter((t) => HAS_WORD.test(t));
}

/**
 * Letters without a canonical decomposition that PostgreSQL's `unaccent` folds to plain letters:
 * Latin-1, Latin Extended-A, the hooked and barred letters of West African alphabets, a few of
 * Latin Extended Additional, the ideographic zero, and the modifier letters that stand for quotes.
 * (Letters with a decomposition, é or ǖ, lose their marks below instead.)
 */
const PLAIN_LETTERS: Record<string, string> = {
  Æ: "AE",
  æ: "ae",
  Ð: "D",
  ð: "d",
  Ø: "O",
  ø: "o",
  Þ: "TH",
  þ: "th",
  ß: "ss",
  ẞ: "SS",
  Đ: "D",
  đ: "d",
  Ħ: "H",
  ħ: "h",
  ı: "i",
  Ĳ: "IJ",
  ĳ: "ij",
  ĸ: "q",
  Ŀ: "L",
  ŀ: "l",
  Ł: "L",
  ł: "l",
  ŉ: "'n",
  Ŋ: "N",
  ŋ: "n",
  Œ: "OE",
  œ: "oe",
  Ŧ: "T",
  ŧ: "t",
  ſ: "s",
  ƀ: "b",
  Ɓ: "B",
  ɓ: "b",
  Ɗ: "D",
  ɗ: "d",
  Ɛ: "E",
  ɛ: "e",
  Ƒ: "F",
  ƒ: "f",
  Ƙ: "K",
  ƙ: "k",
  Ɲ: "N",
  ɲ: "n",
  Ƴ: "Y",
  ƴ: "y",
  ẚ: "a",
  ẜ: "s",
  ẝ: "s",
  Ỻ: "LL",
  ỻ: "ll",
  Ỽ: "V",
  ỽ: "v",
  Ỿ: "Y",
  ỿ: "y",
  〇: "0",
  // Modifier letters that stand for quotes and marks (Hawaiʻi): words break there, as on unaccent.
  ʹ: "'",
  ʺ: '"',
  ʻ: "'",
  ʼ: "'",
  ʽ: "'",
  ˈ: "'",
  ˋ: "`",
  ː: ":",
};
const NON_ASCII = /\P{ASCII}/u;
const PLAIN_LETTER = new RegExp(`[${Object.keys(PLAIN_LETTERS).join("")}]`, "gu");

/** Combining diacritical marks, wherever they stand (`unaccent` drops them too). */
const COMBINING_MARK = /[\u0300-\u036f]/g;

/**
 * Compatibility forms, folded to the Latin letters and digits they stand for (as `unaccent` does):
 * vulgar fractions (½), letterlike symbols and number forms (ℂ, Ⅻ), enclosed alphanumerics (ⓐ),
 * CJK squared units (㎏), ligatures (ﬁ), full-width ASCII (Ａ) and enclosed alphanumeric supplements.
 * One that stands for other letters (ℵ, ℏ, ㌀) is left as it is, as `unaccent` leaves it.
 */
const COMPATIBILITY_FORM =
  /[\u00bc-\u00be\u2100-\u218f\u2460-\u24ff\u3300-\u33ff\ufb00-\ufb06\uff01-\uff5e\u{1f100}-\u{1f1ff}]/gu;
/** A compatibility form's plain letters and digits when they are all ASCII; else the form itself. */
function latinForm(form: string): string {
  const plain = form.normalize("NFKD").replace(COMBINING_MARK, "");
  for (const c of plain) if (c > "\x7f" && HAS_WORD.test(c)) return form;
  return plain;
}

/** Latin and Greek letters, whose accents are dropped, and Cyrillic Ё/ё (as `unaccent`: Е/е). */
const ACCENTED = /[\u00c0-\u024f\u0370-\u03ff\u1e00-\u1fff\u0401\u0451]/gu;

/**
 * `text` without accents, the way both indexes keep it and both searches read the user's words:
 * "Søren Ærø, Straße, ﬁnal, Ｔｅｓｔ, Ωμέγα" folds to "Soren AEro, Strasse, final, Test, Ωμεγα".
 * Case is kept (each index lower-cases its words). Other scripts keep their marks, as `unaccent`
 * keeps them: й stays й (Ё alone folds).
 */
export function foldForSearch(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text
    .replace(COMPATIBILITY_FORM, latinForm)
    .replace(ACCENTED, (c) => c.normalize("NFD"))
    .replace(COMBINING_MARK, "")
    .replace(PLAIN_LETTER, (c) => PLAIN_LETTERS[c])
    .normalize("NFC");
}

/**
 * The user's search text as words, each word its folded tokens (a word such as "a.b" is a phrase
 * of two); words with no letter or digit are left out.
 */
export function searchWords(text: string): string[][] {
  return text
    .split(/\s+/)
    .map((word) => searchTokens(foldForSearch(word)))
    .filter((tokens) => tokens.length > 0);
}

/** A message body as an index keeps it: its folded tokens, lower-cased, one space apart. */
export function indexedText(body: string): string {
  return searchTokens(foldForSearch(body).toLowerCase()).join(" ");
}

/**
 * A thread's contact label as an index keeps it: the contact's names, folded, and the phone's digit
 * suffixes (so "5550123" finds "+14155550123").
 */
export function contactLabel(firstName: string | null, lastName: string | null, phone: string): string {
  const digits = phone.replace(/[+ ]/g, "");
  const suffixes: string[] = [digits];
  for (let from = 1; from <= 10; from++) suffixes.push(digits.slice(from));
  return `${indexedText(`${firstName ?? ""} ${lastName ?? ""}`)} ${suffixes.join(" ")}`;
}
