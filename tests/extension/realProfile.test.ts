// Contract with the runtime: what `ascend-lens run --profile` really writes parses, decorates and
// renders. Skipped without the project's venv.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runArgs } from "../../extension/commands/cliCommands";
import { runProcess } from "../../extension/common/process";
import { decorationsByFile } from "../../extension/debug/decorationModel";
import { renderProfileHtml } from "../../extension/notebook/rendererView";
import { parseProfileText } from "../../extension/profile/model";

const ROOT = join(__dirname, "..", "..", "..");
const PYTHON = join(ROOT, ".venv", "bin", "python");
const SCRIPT = join(ROOT, "tests", "e2e", "workspace", "profile_me.py");

describe("a real `ascend-lens run --profile`", { skip: !existsSync(PYTHON) && "no .venv (run ./scripts/setup)" }, () => {
  it("writes lines.json that the extension reads and decorates", async () => {
    const dir = mkdtempSync(join(tmpdir(), "al-prof-"));
    try {
      const r = await runProcess(PYTHON, runArgs({ deviceProfile: "910B", deviceCount: 1 }, dir, SCRIPT), { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      const profile = parseProfileText(readFileSync(join(dir, "lines.json"), "utf8"));
      assert.equal(profile.device, "Ascend910B2");
      assert.equal(profile.trace, join(dir, "trace.json"));
      const lines = decorationsByFile(profile).get(SCRIPT) ?? [];
      // The line of profile_me.py that launches the four MatMuls (0-based, as decorations count).
      const matmulLine = readFileSync(SCRIPT, "utf8").split("\n").findIndex((l) => l.includes("a @ b"));
      const matmul = lines.find((d) => d.line === matmulLine);
      assert.ok(matmul, JSON.stringify(lines.map((d) => d.line)));
      assert.match(matmul.text, /^4 ops · [\d.]+ µs · [\d.]+%$/);
      assert.match(matmul.hover, /\| MatMul \| 4 \|/);
      assert.match(renderProfileHtml(profile), new RegExp(`profile_me\\.py:${matmulLine + 1}<`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
