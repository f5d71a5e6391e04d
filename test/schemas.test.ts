import { describe, expect, it } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { t } from "elysia";
import { Body, closed, responses } from "../src/http/schemas";

describe("response schemas are closed", () => {
  const shape = t.Object({
    ok: t.Literal(true),
    item: t.Object({ id: t.String(), tags: t.Array(t.Object({ name: t.String() })) }),
    maybe: t.Union([t.Object({ n: t.Integer() }), t.Null()]),
    fields: t.Record(t.String(), t.Unknown()),
  });
  const good = { ok: true, item: { id: "a", tags: [{ name: "x" }] }, maybe: { n: 1 }, fields: { any: 1 } };

  it("accepts exactly the declared fields, records stay open", () => {
    expect(Value.Check(closed(shape), good)).toBe(true);
    expect(Value.Check(responses(shape)[200], good)).toBe(true);
  });

  it("refuses an undeclared field at any depth", () => {
    for (const leak of [
      { ...good, secret: 1 },
      { ...good, item: { ...good.item, hash: "h" } },
      { ...good, item: { ...good.item, tags: [{ name: "x", internal: true }] } },
      { ...good, maybe: { n: 1, extra: 2 } },
    ]) {
      expect(Value.Check(closed(shape), leak)).toBe(false);
    }
  });

  it("leaves the original schema open", () => {
    closed(shape);
    expect(Value.Check(shape, { ...good, secret: 1 })).toBe(true);
  });
});

describe("request bodies", () => {
  it("let unknown fields through for the handler to ignore", () => {
    const body = Body({ name: t.String() });
    expect(Value.Check(body, { name: "a", future_field: 1 })).toBe(true);
    expect(Value.Check(body, { future_field: 1 })).toBe(false);
  });
});
