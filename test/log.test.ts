import { describe, expect, it } from "bun:test";
import { errorText } from "../src/lib/log";

/** An error as postgres.js throws it: a class of its own (its name minified in the binary) and a SQLSTATE. */
class MinifiedName extends Error {
  code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = "ti";
    this.code = code;
  }
}

/** A failed query as drizzle wraps it: the statement and its parameters, the database's error as its cause. */
function failedQuery(cause: unknown) {
  return new Error('Failed query: select "id" from "jobs" where "id" = $1\nparams: +14155550100', { cause });
}

describe("errorText: one line for a log field", () => {
  const cases: [string, unknown, string][] = [
    ["a plain error: its message", new Error("boom"), "boom"],
    ["only the first line of a message", new Error("first line\n    at stack()"), "first line"],
    [
      "the database's error, with its code, not the class name",
      new MinifiedName('database "app" does not exist', "3D000"),
      'database "app" does not exist (3D000)',
    ],
    [
      "a failed query: its cause, not the statement or its parameters",
      failedQuery(new MinifiedName("terminating connection due to administrator command", "57P01")),
      "terminating connection due to administrator command (57P01)",
    ],
    [
      "a code the message already says is not repeated",
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      "connect ECONNREFUSED 127.0.0.1:5432",
    ],
    [
      "causes nested twice: the innermost",
      new Error("outer", { cause: failedQuery(new Error("inner")) }),
      "inner",
    ],
    ["a thrown string", "plain text\nsecond", "plain text"],
    ["a thrown object without a message", { code: 7 }, "[object Object]"],
    ["nothing", undefined, "undefined"],
  ];
  for (const [name, error, expected] of cases)
    it(name, () => {
      expect(errorText(error)).toBe(expected);
    });
});
