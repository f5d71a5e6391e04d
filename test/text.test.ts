import { describe, expect, it } from "bun:test";
import { storableText, textProblem } from "../src/lib/text";

describe("text no database can keep", () => {
  const cases: [string, string, string | null, string][] = [
    ["plain", "hello", null, "hello"],
    ["accents and emoji", "Zoë 👋", null, "Zoë 👋"],
    ["NUL", "a\u0000b", "must not contain NUL characters (\\u0000)", "a\uFFFDb"],
    ["lone high surrogate", "a\ud800b", "must be valid Unicode text (it has a lone surrogate)", "a\uFFFDb"],
    ["lone low surrogate", "\udc00", "must be valid Unicode text (it has a lone surrogate)", "\uFFFD"],
    ["both", "\u0000\ud800", "must not contain NUL characters (\\u0000)", "\uFFFD\uFFFD"],
    ["an escaped NUL is text", "a\\u0000b", null, "a\\u0000b"],
  ];
  for (const [what, text, problem, stored] of cases)
    it(what, () => {
      expect({ problem: textProblem(text), stored: storableText(text) }).toEqual({ problem, stored });
    });
});
