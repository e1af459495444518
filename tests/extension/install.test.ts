import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { bundledWheel, venvPython } from "../../extension/common/installCore";

describe("bundled wheel", () => {
  it("picks the newest ascend_lens wheel and ignores other files", () => {
    const dir = mkdtempSync(join(tmpdir(), "al-wheel-"));
    try {
      assert.equal(bundledWheel(dir), undefined);
      for (const f of ["ascend_lens-0.9.0-py3-none-any.whl", "ascend_lens-0.10.0-py3-none-any.whl", "numpy-2.0-cp311.whl", "notes.txt"]) {
        writeFileSync(join(dir, f), "");
      }
      assert.equal(bundledWheel(dir), join(dir, "ascend_lens-0.10.0-py3-none-any.whl"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is absent in a development build", () => {
    assert.equal(bundledWheel("/nonexistent/out/bundled"), undefined);
  });

  it("finds a managed venv's interpreter per platform", () => {
    assert.equal(venvPython("/s/venv", "linux"), "/s/venv/bin/python");
    assert.equal(venvPython("/s/venv", "win32"), join("/s/venv", "Scripts", "python.exe"));
  });
});
