// Extension hot paths on a large per-line profile, against JSON.parse of the same text (the floor:
// every consumer has to parse it) measured in the same run. Writes bench_extension.md beside it.
// usage: node benchmarks/bench_extension.mjs   (from the repo root, after npm ci)
import * as esbuild from "esbuild";
import { writeFileSync } from "node:fs";
import { arch, cpus, platform, release } from "node:os";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const entry = `
  export { parseProfileText } from "./extension/profile/model";
  export { decorationsByFile } from "./extension/debug/decorationModel";
  export { renderProfileHtml } from "./extension/notebook/rendererView";
  export { decodeMessage } from "./extension/notebook/bridgeProtocol";
`;
const out = await esbuild.build({ stdin: { contents: entry, resolveDir: root, loader: "ts" }, bundle: true, format: "esm", platform: "node", write: false });
const mod = await import("data:text/javascript;base64," + Buffer.from(out.outputFiles[0].text).toString("base64"));

// A profile the size of a long training script: 5,000 hot lines over 50 files, 5 ops each.
const bounds = ["cube", "vector", "memory", "launch", "aicpu"];
const lines = [];
for (let i = 0; i < 5000; i++) {
  const top_ops = bounds.map((b, k) => ({ op_type: `Op${k}`, count: 1 + k, total_us: 10 + k, bound: b }));
  lines.push({ file: `/ws/pkg/mod${i % 50}.py`, line: 1 + Math.floor(i / 50), op_count: 15, total_us: 60, share: 1 / 5000, bound: bounds[i % 5], top_ops });
}
const doc = { schema: "ascend-lens.profile/1", device: "Ascend910B2", total_us: 300000, op_count: 75000, trace: null, lines, top_ops: [] };
const text = JSON.stringify(doc);
const bridgeLine = JSON.stringify({ type: "output", id: "r1", output: { output_type: "display_data", data: { "application/vnd.ascend-lens.profile+json": doc, "text/plain": "profile" }, metadata: {} } });

function time(fn, rounds = 7) {
  const samples = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(rounds / 2)];
}

const rows = [
  ["JSON.parse (baseline)", time(() => JSON.parse(text))],
  ["parseProfileText (parse + validate)", time(() => mod.parseProfileText(text))],
  ["parse + decorationsByFile", time(() => mod.decorationsByFile(mod.parseProfileText(text)))],
  ["parse + renderProfileHtml (30 rows)", time(() => mod.renderProfileHtml(mod.parseProfileText(text)))],
  ["bridge decodeMessage of the MIME bundle", time(() => mod.decodeMessage(bridgeLine))],
];
const base = rows[0][1];
const md = [
  "# Extension benchmark (benchmarks/bench_extension.mjs)",
  "",
  `- date: ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`,
  `- machine: ${arch()}, ${cpus().length} cores, ${platform()} ${release()}, Node ${process.version} (shared with other jobs while measured)`,
  `- input: a profile with ${lines.length} lines (${(text.length / 1e6).toFixed(2)} MB of JSON); medians of 7 rounds`,
  "- baseline: JSON.parse of the same text in the same run",
  "",
  "| step | ms | vs JSON.parse |",
  "|---|---:|---:|",
  ...rows.map(([name, ms]) => `| ${name} | ${ms.toFixed(2)} | ${(ms / base).toFixed(2)}x |`),
  "",
];
writeFileSync(join(root, "benchmarks", "bench_extension.md"), md.join("\n"));
console.log(md.join("\n"));
