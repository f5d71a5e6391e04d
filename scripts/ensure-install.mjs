// Installs dependencies when they are missing or older than package.json, so `npm start` and
// `npm test` work on a fresh clone with nothing but Node.js and npm.
import { execSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const marker = join(root, "node_modules", ".package-lock.json");
const bun = join(root, "node_modules", ".bin", process.platform === "win32" ? "bun.exe" : "bun");
const lock = join(root, "package-lock.json");

const stale =
  !existsSync(marker) ||
  !existsSync(bun) ||
  statSync(join(root, "package.json")).mtimeMs > statSync(marker).mtimeMs ||
  (existsSync(lock) && statSync(lock).mtimeMs > statSync(marker).mtimeMs);

if (stale) {
  console.log("Installing dependencies (npm install)…");
  execSync("npm install --no-audit --no-fund", { cwd: root, stdio: "inherit" });
}

// Fixes in installed dependencies that their releases lack (a no-op once applied).
await import("./patch-dependencies.mjs");
