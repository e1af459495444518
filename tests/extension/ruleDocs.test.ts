import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ruleMarkdown, RULE_DOC_SCRIPT, stripIndent } from "../../extension/commands/ruleDocsCore";
import { runProcess } from "../../extension/common/process";

const PYTHON = join(__dirname, "..", "..", "..", ".venv", "bin", "python");

describe("rule documentation", () => {
  it("dedents docstrings and names the rule", () => {
    assert.equal(stripIndent("First.\n\n    ## What it does\n    Flags x.\n      nested"), "First.\n\n## What it does\nFlags x.\n  nested");
    assert.equal(ruleMarkdown("MS101", { code: "MS101", name: "try-statement", doc: "Flags try." }), "# MS101 (try-statement)\n\nFlags try.\n");
    assert.equal(ruleMarkdown("XX1", { error: "unknown rule XX1" }), "# XX1\n\nunknown rule XX1.");
  });

  it("reads a rule's page and the rule list from the installed package", { skip: !existsSync(PYTHON) && "no .venv" }, async () => {
    const one = await runProcess(PYTHON, ["-c", RULE_DOC_SCRIPT, "MS101"], { timeoutMs: 60_000 });
    assert.equal(one.code, 0, one.stderr);
    const md = ruleMarkdown("MS101", JSON.parse(one.stdout) as Record<string, unknown>);
    assert.match(md, /^# MS101 \(try-statement\)\n/);
    assert.match(md, /\n## What it does\n/);
    const all = await runProcess(PYTHON, ["-c", RULE_DOC_SCRIPT], { timeoutMs: 60_000 });
    const rules = (JSON.parse(all.stdout) as { rules: { code: string; summary: string }[] }).rules;
    assert.ok(rules.some((r) => r.code === "NPU202" && r.summary.length > 0));
    const unknown = await runProcess(PYTHON, ["-c", RULE_DOC_SCRIPT, "ZZ999"], { timeoutMs: 60_000 });
    assert.deepEqual(JSON.parse(unknown.stdout), { error: "unknown rule ZZ999" });
  });
});
