import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellFileOf, escapeHtml, lineLabel, renderOutputHtml, renderProfileHtml } from "../../extension/notebook/rendererView";
import { sampleProfile } from "./fixtures/profile";

describe("profile renderer", () => {
  it("renders the summary, a time split segment per line and one table row per line", () => {
    const html = renderProfileHtml(sampleProfile());
    assert.match(html, /<b>Ascend910B2<\/b> \(emulated\) · 120 ops · 1\.52 ms simulated device time/);
    assert.equal((html.match(/<span style="width:/g) ?? []).length, 2);
    assert.match(html, /width:59\.10%;background:#d9534f/);
    assert.equal((html.match(/<tr><td title=/g) ?? []).length, 2);
    assert.match(html, /<td title="\/abs\/path\/train\.py">train\.py:42<\/td><td class="num">30<\/td><td class="num">900\.2 µs<\/td>/);
    assert.match(html, /MatMul×20, Add×10/);
  });

  it("caps the table and says how many lines are hidden", () => {
    const p = sampleProfile();
    const html = renderProfileHtml(p, 1);
    assert.equal((html.match(/<tr><td title=/g) ?? []).length, 1);
    assert.match(html, /… 1 more lines/);
  });

  it("escapes every string that comes from the document", () => {
    const p = sampleProfile();
    p.device = "<img src=x onerror=alert(1)>";
    p.lines[0]!.file = '/x/"><script>.py';
    p.lines[0]!.top_ops[0]!.op_type = "<b>";
    const html = renderProfileHtml(p);
    assert.doesNotMatch(html, /<img|<script|<b><b>/);
    assert.match(html, /<td>&#60;b&#62;×20, Add×10<\/td>/);
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;");
  });

  it("shows why a document is not a profile instead of failing", () => {
    assert.match(
      renderOutputHtml({ schema: "other" }),
      /Cannot show this Ascend Lens profile: profile\.schema: expected &#34;ascend-lens\.profile\/1&#34;, got &#34;other&#34;/,
    );
    assert.match(renderOutputHtml({ ...sampleProfile(), lines: [] }), /No work was launched from a user source line/);
  });

  it("labels a notebook cell's own lines by line number", () => {
    const p = sampleProfile();
    p.lines[0]!.file = "/tmp/ipykernel_1/2555719659.py";
    const md = { "application/vnd.ascend-lens.profile+json": { cell_file: "/tmp/ipykernel_1/2555719659.py", execution_count: 3 } };
    const cellFile = cellFileOf(md, "application/vnd.ascend-lens.profile+json");
    assert.equal(cellFile, "/tmp/ipykernel_1/2555719659.py");
    const html = renderProfileHtml(p, 30, cellFile);
    assert.match(html, /<td title="\/tmp\/ipykernel_1\/2555719659\.py">line 42<\/td>/);
    assert.match(html, />train\.py:7<\/td>/);
    assert.equal(lineLabel("/a/b.py", 3), "b.py:3");
    assert.equal(cellFileOf(undefined, "x"), undefined);
    assert.equal(cellFileOf({ cell_file: "/c.py" }, "x"), "/c.py");
  });
});
