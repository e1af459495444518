import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { decorationsByFile, hoverMarkdown, lineText, shadeFor, SHADE_LEVELS } from "../../extension/debug/decorationModel";
import { formatBytes, formatDuration, formatShare } from "../../extension/profile/format";
import { sampleProfile } from "./fixtures/profile";

describe("formats", () => {
  it("chooses the unit by size", () => {
    assert.equal(formatDuration(0.84), "0.8 µs");
    assert.equal(formatDuration(900.24), "900.2 µs");
    assert.equal(formatDuration(1523.4), "1.52 ms");
    assert.equal(formatDuration(2_100_000), "2.10 s");
    assert.equal(formatShare(0.591), "59.1%");
    assert.equal(formatBytes(512), "512 B");
    assert.equal(formatBytes(64 * 1024 ** 3), "64.0 GiB");
  });
});

describe("profile decorations", () => {
  it("writes op count, simulated time and share at the end of the line", () => {
    assert.equal(lineText(sampleProfile().lines[0]!), "30 ops · 900.2 µs · 59.1%");
    assert.equal(lineText({ ...sampleProfile().lines[0]!, op_count: 1 }), "1 op · 900.2 µs · 59.1%");
  });

  it("shades by share in SHADE_LEVELS steps", () => {
    assert.equal(SHADE_LEVELS, 5);
    assert.deepEqual([0, 0.049, 0.05, 0.149, 0.15, 0.3, 0.5, 1].map(shadeFor), [0, 0, 1, 1, 2, 3, 4, 4]);
  });

  it("breaks the line's time down by op and bound in the hover", () => {
    const md = hoverMarkdown(sampleProfile().lines[0]!, "Ascend910B2");
    assert.match(md, /30 ops, 900\.2 µs simulated, 59\.1% of the run; mostly \*\*cube\*\*-bound/);
    assert.match(md, /\| MatMul \| 20 \| 800\.0 µs \| 88\.9% \| cube \|/);
    assert.match(md, /\| Add \| 10 \| 100\.2 µs \| 11\.1% \| memory \|/);
    assert.doesNotMatch(md, /other types/);
  });

  it("mentions ops beyond the top five and escapes table syntax", () => {
    const l = { ...sampleProfile().lines[0]!, op_count: 35, top_ops: [{ op_type: "A|B", count: 30, total_us: 900.2, bound: "cube" }] };
    const md = hoverMarkdown(l, "dev");
    assert.match(md, /\| A\\\|B \| 30 \|/);
    assert.match(md, /…and 5 ops of other types/);
  });

  it("groups by file key with 0-based lines in line order", () => {
    const byFile = decorationsByFile(sampleProfile());
    assert.deepEqual([...byFile.keys()], ["/abs/path/train.py"]);
    const lines = byFile.get("/abs/path/train.py")!;
    assert.deepEqual(lines.map((d) => [d.line, d.shade, d.text]), [
      [6, 3, "90 ops · 623.2 µs · 40.9%"],
      [41, 4, "30 ops · 900.2 µs · 59.1%"],
    ]);
  });

  it("keeps the larger entry when two spellings of a path meet on one line", () => {
    const p = sampleProfile();
    p.lines[1] = { ...p.lines[1]!, file: "/ABS/path/train.py", line: 42, share: 0.1 };
    const byFile = decorationsByFile(p, (f) => f.toLowerCase());
    const lines = byFile.get("/abs/path/train.py")!;
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.share, 0.591);
  });

  it("decorates nothing for a profile without user lines", () => {
    assert.equal(decorationsByFile({ ...sampleProfile(), lines: [] }).size, 0);
  });
});
