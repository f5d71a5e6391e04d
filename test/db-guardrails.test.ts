/**
 * Guardrails for the one-store work (PostgreSQL beside SQLite): rules the type checker cannot see.
 * 1. Only `src/db/` knows the SQLite driver: no `bun:sqlite` import elsewhere in `src/`.
 * 2. Every statement of a transaction runs through its transaction handle: the callback of
 *    `X.transaction(...)` takes the handle, and does not use `X` itself. On SQLite both run on the
 *    one connection, so using `X` works today; on a connection pool it would run outside the
 *    transaction (no atomicity) and could wait for a connection the transaction holds. (Statements
 *    prepared on `X` before the callback are beyond a syntax check: ask for them with the handle.)
 */
import { describe, expect, it } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const root = join(import.meta.dir, "..");

function sourceFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "dashboard") found.push(...sourceFiles(path));
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".generated.ts")) {
      found.push(path);
    }
  }
  return found;
}

function parse(path: string): ts.SourceFile {
  return ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.ESNext, true);
}

/** `bun:sqlite` imports (`import … from`, `export … from`, `import(…)`, `require(…)`) in a file. */
export function sqliteImports(file: ts.SourceFile): number[] {
  const lines: number[] = [];
  const visit = (node: ts.Node) => {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) specifier = node.moduleSpecifier;
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require"))
    )
      specifier = node.arguments[0];
    if (specifier && ts.isStringLiteral(specifier) && specifier.text === "bun:sqlite")
      lines.push(file.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return lines;
}

/**
 * Uses of a transaction's outer handle inside its callback: for `db.transaction((tx) => …)` (or
 * `this.db.transaction`), every `db` (or `this.db`) in the callback's body, as `line: text`, and a
 * callback that takes no handle at all. bun:sqlite's own `sqlite.transaction(fn)` (SQLite-only
 * code under src/db/: the migration runner) passes none and is left alone.
 */
export function outerHandleUses(file: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "transaction"
    ) {
      const handle = node.expression.expression.getText(file);
      const callback = node.arguments[0];
      if (
        handle !== "sqlite" &&
        callback &&
        (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback))
      ) {
        if (callback.parameters.length === 0) {
          const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
          found.push(`${line}: ${handle}.transaction callback takes no transaction handle`);
        }
        const inside = (n: ts.Node) => {
          const isHandle =
            (ts.isIdentifier(n) || ts.isPropertyAccessExpression(n)) &&
            n.getText(file) === handle &&
            // `x.db` is another object's property, not the handle; a property name is not a use.
            !(ts.isPropertyAccessExpression(n.parent) && n.parent.name === n) &&
            !(ts.isPropertyAssignment(n.parent) && n.parent.name === n);
          if (isHandle) {
            const line = file.getLineAndCharacterOfPosition(n.getStart()).line + 1;
            found.push(`${line}: ${n.parent.getText(file).split("\n")[0].slice(0, 80)}`);
            return;
          }
          ts.forEachChild(n, inside);
        };
        inside(callback.body);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe("the database guardrails", () => {
  const files = sourceFiles(join(root, "src"));

  it("finds the source files", () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it("imports bun:sqlite only under src/db/", () => {
    const outside = files
      .filter((path) => !relative(root, path).startsWith("src/db/"))
      .flatMap((path) => sqliteImports(parse(path)).map((line) => `${relative(root, path)}:${line}`));
    expect(outside).toEqual([]);
  });

  it("runs every statement of a transaction through its transaction handle", () => {
    const uses = files.flatMap((path) =>
      outerHandleUses(parse(path)).map((use) => `${relative(root, path)}:${use}`),
    );
    expect(uses).toEqual([]);
  });
});

describe("the guardrail checks themselves", () => {
  const cases: [string, string, string[]][] = [
    ["a type import", 'import type { Database } from "bun:sqlite";', ["1"]],
    ["a value import", 'import { Database } from "bun:sqlite";', ["1"]],
    ["a re-export", 'export { Database } from "bun:sqlite";', ["1"]],
    ["a dynamic import", 'const m = await import("bun:sqlite");', ["1"]],
    ["a require", 'const m = require("bun:sqlite");', ["1"]],
    ["another module", 'import { drizzle } from "drizzle-orm/bun-sqlite";', []],
  ];
  for (const [name, source, expected] of cases) {
    it(`sees ${name}`, () => {
      const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.ESNext, true);
      expect({ name, lines: sqliteImports(file).map(String) }).toEqual({ name, lines: expected });
    });
  }

  const txCases: [string, string, number][] = [
    ["db inside db.transaction", "db.transaction((tx) => { check(db, 1); tx.run(); });", 1],
    ["this.db inside this.db.transaction", "this.db.transaction((tx) => { f(this.db); });", 1],
    ["a nested function's use", "db.transaction((tx) => { list.map(() => db.x()); });", 1],
    ["only tx", "db.transaction((tx) => { tx.select(); f(tx); });", 0],
    ["a callback without the handle", "db.transaction(() => { insert.run(); });", 1],
    ["bun:sqlite's own transaction", "sqlite.transaction(() => { sqlite.exec(s); })();", 0],
    ["db outside the callback", "f(db); db.transaction((tx) => { tx.run(); }); g(db);", 0],
    ["another object's db property", "db.transaction((tx) => { f(server.db, { db: 1 }); });", 0],
  ];
  for (const [name, source, count] of txCases) {
    it(`counts ${name}`, () => {
      const file = ts.createSourceFile("x.ts", source, ts.ScriptTarget.ESNext, true);
      expect({ name, uses: outerHandleUses(file).length }).toEqual({ name, uses: count });
    });
  }
});
