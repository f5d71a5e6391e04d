import { describe, expect, it } from "bun:test";
import { Mutex } from "../src/db/store/mutex";

describe("Mutex.runHandingOn", () => {
  it("lets the next holder start once a holder hands on, before that holder is over", async () => {
    const mutex = new Mutex();
    const steps: string[] = [];
    const finish = Promise.withResolvers<void>();
    const first = mutex.runHandingOn(async (handOn) => {
      steps.push("first runs");
      handOn();
      await finish.promise;
      steps.push("first over");
    });
    const second = mutex.run(() => {
      steps.push("second runs");
    });
    await second;
    expect(mutex.idle).toBe(false);
    finish.resolve();
    await first;
    expect(steps).toEqual(["first runs", "second runs", "first over"]);
    expect(mutex.idle).toBe(true);
  });

  it("hands on when a holder that never called handOn is over, or failed", async () => {
    const mutex = new Mutex();
    const steps: string[] = [];
    const failing = mutex.runHandingOn(async () => {
      await Bun.sleep(5);
      steps.push("first over");
      throw new Error("failed");
    });
    const second = mutex.runHandingOn(() => {
      steps.push("second runs");
    });
    await expect(failing).rejects.toThrow("failed");
    await second;
    expect(steps).toEqual(["first over", "second runs"]);
    expect(mutex.idle).toBe(true);
  });
});
