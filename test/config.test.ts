import { describe, expect, it } from "bun:test";
import { ConfigError, loadConfig } from "../src/config";

describe("JOB_LEASE_SCALE", () => {
  it("defaults to 1 and takes a factor between 0.05 and 10", () => {
    expect(loadConfig({}, {}).jobLeaseScale).toBe(1);
    expect(loadConfig({}, { JOB_LEASE_SCALE: "0.2" }).jobLeaseScale).toBe(0.2);
    expect(loadConfig({}, { JOB_LEASE_SCALE: "10" }).jobLeaseScale).toBe(10);
  });

  it("refuses anything else with a line that names it", () => {
    for (const raw of ["0", "0.01", "11", "-1", "abc"]) {
      expect(() => loadConfig({}, { JOB_LEASE_SCALE: raw })).toThrow(ConfigError);
      expect(() => loadConfig({}, { JOB_LEASE_SCALE: raw })).toThrow(/^JOB_LEASE_SCALE must be/);
    }
  });
});
