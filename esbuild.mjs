// Bundles the extension (Node, CommonJS) and the notebook renderer (browser, ESM) into out/.
// `--tests` bundles each tests/extension/*.test.ts into out/tests/extension/ for `node --test`.
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

const common = {
  bundle: true,
  sourcemap: !production,
  minify: production,
  logLevel: "warning",
  target: "es2022",
};

if (tests) {
  const dir = "tests/extension";
  // A deleted test must not live on as a stale bundle.
  rmSync("out/tests/extension", { recursive: true, force: true });
  const entryPoints = readdirSync(dir)
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join(dir, f));
  await esbuild.build({
    ...common,
    entryPoints,
    outdir: "out/tests/extension",
    platform: "node",
    format: "cjs",
    // Pure modules only: a test that pulls in `vscode` fails to load, which is the point.
    external: [],
  });
} else {
  await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: ["extension/extension.ts"],
      outfile: "out/extension.js",
      platform: "node",
      format: "cjs",
      external: ["vscode"],
    }),
    esbuild.build({
      ...common,
      entryPoints: ["extension/notebook/renderer.ts"],
      outfile: "out/renderer.js",
      platform: "browser",
      format: "esm",
    }),
  ]);
}
