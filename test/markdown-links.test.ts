import { describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

// Every relative link and anchor in README.md and docs/*.md resolves: the file (or folder) exists,
// and an anchor names a heading of the target file as GitHub spells it.

const root = resolve(import.meta.dir, "..");

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The lines outside fenced code blocks, with inline code spans blanked out. */
function proseLines(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split("\n")) {
    const open = line.match(/^\s*(```+|~~~+)/);
    if (open) {
      if (fence === null) fence = open[1].slice(0, 3);
      else if (open[1].startsWith(fence)) fence = null;
      out.push("");
      continue;
    }
    out.push(fence === null ? line.replace(/(`+)[^`]*?\1/g, "") : "");
  }
  return out;
}

/** The anchors a markdown file's headings make (a repeated heading gets -1, -2, ...). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = !fence && line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every broken relative link of the given markdown files, as "file:line: target (why)". */
function brokenLinks(files: string[], base: string): string[] {
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    proseLines(text).forEach((line, i) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const where = `${relative(base, file)}:${i + 1}: ${target}`;
        const hash = target.indexOf("#");
        const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
        const resolved = path === "" ? file : resolve(dirname(file), path);
        if (!existsSync(resolved)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor === null) continue;
        if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) {
          broken.push(`${where} (an anchor into something that is not a markdown file)`);
          continue;
        }
        if (!anchors(readFileSync(resolved, "utf8")).has(anchor)) broken.push(`${where} (no such heading)`);
      }
    });
  }
  return broken;
}

const docs = readdirSync(join(root, "docs"))
  .filter((f) => f.endsWith(".md"))
  .map((f) => join(root, "docs", f));

describe("markdown links of README.md and docs/", () => {
  it("resolve: every relative file, image and anchor exists", () => {
    expect(brokenLinks([join(root, "README.md"), ...docs], root)).toEqual([]);
  });

  it("reach every docs file from the README's table of contents", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const unlisted = docs.map((f) => relative(root, f)).filter((f) => !readme.includes(`](${f})`));
    expect(unlisted).toEqual([]);
  });

  it("keep `npm start` and `npm test` in the README", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    expect(["npm start", "npm test"].filter((c) => !readme.includes(c))).toEqual([]);
  });
});

describe("the link checker", () => {
  const cases: { name: string; text: string; broken: string[] }[] = [
    { name: "a file that exists", text: "[b](b.md)", broken: [] },
    { name: "a missing file", text: "[x](missing.md)", broken: ["a.md:1: missing.md (no such file)"] },
    { name: "a missing image", text: "![x](img/none.png)", broken: ["a.md:1: img/none.png (no such file)"] },
    { name: "an anchor in another file", text: "[b](b.md#security-daily-budgets)", broken: [] },
    { name: "a repeated heading's anchor", text: "[b](b.md#notes-1)", broken: [] },
    { name: "a heading with code and punctuation", text: "[b](b.md#the-offer_url-link-10dlc)", broken: [] },
    {
      name: "a missing anchor in another file",
      text: "[b](b.md#nowhere)",
      broken: ["a.md:1: b.md#nowhere (no such heading)"],
    },
    { name: "an anchor in the same file", text: "# Top\n[t](#top)", broken: [] },
    {
      name: "a missing anchor in the same file",
      text: "[t](#gone)",
      broken: ["a.md:1: #gone (no such heading)"],
    },
    { name: "an external link", text: "[e](https://example.com/x.md#y)", broken: [] },
    { name: "a link inside a code block", text: "```\n[x](missing.md)\n```", broken: [] },
    { name: "a link inside inline code", text: "`[x](missing.md)`", broken: [] },
  ];
  for (const c of cases) {
    it(`reports ${c.name} ${c.broken.length ? "as broken" : "as fine"}`, () => {
      const dir = mkdtempSync(join(tmpdir(), "md-links-"));
      try {
        writeFileSync(
          join(dir, "b.md"),
          "# B\n\n### Security: daily budgets\n\n## Notes\n\n## Notes\n\n## The `{{offer_url}}` link (10DLC)\n",
        );
        writeFileSync(join(dir, "a.md"), c.text);
        expect({ case: c.name, broken: brokenLinks([join(dir, "a.md")], dir) }).toEqual({
          case: c.name,
          broken: c.broken,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
