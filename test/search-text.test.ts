/**
 * The text of thread search (src/db/search/text.ts): the folding both indexes are written with and
 * both searches read the user's words with, the words of a search, and a contact's label.
 */
import { describe, expect, it } from "bun:test";
import { contactLabel, foldForSearch, indexedText, searchWords } from "../src/db/search/text";

describe("foldForSearch", () => {
  const cases: [name: string, text: string, folded: string][] = [
    ["plain ASCII is left as it is", "Order #4471, ok?", "Order #4471, ok?"],
    ["accents of Latin letters go", "Crème brûlée, Zoë, Ångström, ǖ", "Creme brulee, Zoe, Angstrom, u"],
    ["a decomposed accent goes too", "Cafe\u0301", "Cafe"],
    [
      "letters without a decomposition",
      "Søren Ærø Œuvre Łódź Đorđe Þór Ħal",
      "Soren AEro OEuvre Lodz Dorde THor Hal",
    ],
    ["sharp s, both cases", "Straße STRAẞE", "Strasse STRASSE"],
    ["dotless i, kra, long s", "ı ĸ ſ", "i q s"],
    ["West African hooked letters", "Ɓɓ Ɗɗ Ɛɛ Ƙƙ Ƴƴ", "Bb Dd Ee Kk Yy"],
    ["ligatures", "ﬁnal ﬂow ﬀ", "final flow ff"],
    ["full-width letters and digits", "Ｏｆｆｅｒ ２０", "Offer 20"],
    ["letterlike symbols and roman numerals", "ℂ Ⅻ ⅳ", "C XII iv"],
    ["a form standing for other letters is kept", "ℵ ℏ", "ℵ ℏ"],
    ["vulgar fractions", "½", "1\u20442"],
    ["the ideographic zero", "〇", "0"],
    ["modifier letters standing for quotes", "Hawaiʻi", "Hawai'i"],
    ["enclosed and squared forms", "ⓐ ㎏", "a kg"],
    ["Greek accents", "Καλημέρα ΐ", "Καλημερα ι"],
    ["Cyrillic Ё folds, й keeps its mark", "Ёлка Йога", "Елка Йога"],
    ["other scripts are left as they are", "東京 한국어 हिंदी", "東京 한국어 हिंदी"],
    ["case is kept", "ÉMILE émile", "EMILE emile"],
    ["emoji and symbols are left as they are", "Hi 👋 ©", "Hi 👋 ©"],
    ["empty", "", ""],
  ];
  for (const [name, text, folded] of cases)
    it(name, () => expect({ name, folded: foldForSearch(text) }).toEqual({ name, folded }));
});

describe("searchWords", () => {
  const cases: [name: string, text: string, words: string[][]][] = [
    ["each whitespace-separated word, folded", "  Søren   straße ", [["Soren"], ["strasse"]]],
    [
      "a word with punctuation is a phrase of its tokens",
      "ann.lee@x 3.75",
      [
        ["ann", "lee", "x"],
        ["3", "75"],
      ],
    ],
    ["a fraction splits into its digits", "½", [["1", "2"]]],
    ["words without a letter or digit are left out", "?! - * 'x'", [["x"]]],
    ["nothing", "   ", []],
  ];
  for (const [name, text, words] of cases)
    it(name, () => expect({ name, words: searchWords(text) }).toEqual({ name, words }));
});

describe("indexedText and contactLabel", () => {
  it("a body is its folded tokens, lower-cased, one space apart", () => {
    expect(indexedText("Grüße aus der STRAẞE: ﬁnal offer (3.75)!")).toBe(
      "grusse aus der strasse final offer 3 75",
    );
  });
  it("a label holds the folded names and the phone's digit suffixes", () => {
    expect(contactLabel("Søren", "Øberg-Łukasz", "+14155550123")).toBe(
      "soren oberg lukasz 14155550123 4155550123 155550123 55550123 5550123 550123 50123 0123 123 23 3",
    );
    expect(contactLabel(null, null, "+14155550123").startsWith(" 14155550123")).toBe(true);
  });
});
