import { describe, expect, it } from "bun:test";
import { Gate } from "../src/lib/gate";

describe("Gate", () => {
  for (const [limit, pieces] of [
    [1, 5],
    [3, 10],
    [8, 4],
  ] as const) {
    it(`runs ${pieces} pieces at most ${limit} at once, in order of arrival, and frees every place`, async () => {
      const gate = new Gate(limit);
      let running = 0;
      let peak = 0;
      const started: number[] = [];
      const results = await Promise.all(
        Array.from({ length: pieces }, (_, i) =>
          gate.run(async () => {
            started.push(i);
            running++;
            peak = Math.max(peak, running);
            await Bun.sleep(2);
            running--;
            return i * 2;
          }),
        ),
      );
      expect(results).toEqual(Array.from({ length: pieces }, (_, i) => i * 2));
      expect(peak).toBe(Math.min(limit, pieces));
      expect(started).toEqual(Array.from({ length: pieces }, (_, i) => i));
      expect(gate.running).toBe(0);
    });
  }

  it("frees the place of a piece that throws", async () => {
    const gate = new Gate(1);
    await expect(gate.run(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await gate.run(async () => "next")).toBe("next");
    expect(gate.running).toBe(0);
  });

  it("refuses a limit that is not a positive integer", () => {
    for (const bad of [0, -1, 1.5]) expect(() => new Gate(bad)).toThrow("positive integer");
  });
});
