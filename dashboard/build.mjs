// Builds the dashboard into one flat folder that inferd serves at /dashboard/<file>:
// our page, script and styles plus uPlot's prebuilt browser files from node_modules.
// No bundler: the page is one script over one small charting library.
//   node build.mjs [OUT_DIR]     (default: ../build/dashboard)
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "..", "build", "dashboard"));
const files = [
  ...readdirSync(join(here, "src")).map((name) => [join(here, "src", name), name]),
  [join(here, "node_modules", "uplot", "dist", "uPlot.iife.min.js"), "uPlot.iife.min.js"],
  [join(here, "node_modules", "uplot", "dist", "uPlot.min.css"), "uPlot.min.css"],
  [join(here, "node_modules", "uplot", "LICENSE"), "uPlot.LICENSE.txt"],
];
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const [from, name] of files) copyFileSync(from, join(out, name));
console.log(`dashboard: ${files.length} files in ${out}`);
