import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { runProcess } from "../../extension/common/process";
import { parseEvaluateResult, STATE_EXPRESSION } from "../../extension/debug/stateProbe";
import { memoryText, parseDevicesState } from "../../extension/views/devicesModel";

const PYTHON = join(__dirname, "..", "..", "..", ".venv", "bin", "python");

describe("parseEvaluateResult", () => {
  it("reads a Python str repr or bare JSON, and nothing else", () => {
    assert.deepEqual(parseEvaluateResult(`'{"a": "it\\'s", "b": [1]}'`), { a: "it's", b: [1] });
    assert.deepEqual(parseEvaluateResult('{"a": 1}'), { a: 1 });
    assert.equal(parseEvaluateResult("NameError: name 'x' is not defined"), undefined);
    assert.equal(parseEvaluateResult("'{\"a\": 1, ...'"), undefined);
  });
});

describe("the state expression in a real interpreter", { skip: !existsSync(PYTHON) && "no .venv (run ./scripts/setup)" }, () => {
  // What debugpy does with an evaluate request: eval in the frame, show the repr.
  const evalRepr = (prelude: string): string => `${prelude}\nprint(repr(eval(${JSON.stringify(STATE_EXPRESSION)})))`;

  it("reports a runtime that has not started without starting it", async () => {
    const r = await runProcess(PYTHON, ["-c", evalRepr("import sys") + "\nprint('npu_runtime.core.runtime' in sys.modules)"]);
    assert.equal(r.code, 0, r.stderr);
    const [repr, started] = r.stdout.trim().split("\n");
    assert.deepEqual(parseEvaluateResult(repr!), { schema: "ascend-lens.state/1", started: false, devices: [] });
    assert.equal(started, "False");
  });

  it("reads devices, memory and streams after NPU work", async () => {
    const prelude = "import numpy as np, npu_runtime as npu\na = npu.Tensor(np.ones((64, 64), dtype=np.float16))\nc = a @ a";
    const r = await runProcess(PYTHON, ["-c", evalRepr(prelude)], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    const snap = parseDevicesState(parseEvaluateResult(r.stdout.trim()), "debug");
    assert.ok(snap);
    const d0 = snap.devices[0]!;
    assert.equal(d0.name, "Ascend910B2");
    assert.ok((d0.memoryUsed ?? 0) >= 2 * 64 * 64 * 2, memoryText(d0));
    assert.ok((d0.memoryTotal ?? 0) > 60 * 1024 ** 3);
    assert.ok(d0.streams.length >= 1 && (d0.streams[0]!.clockUs ?? 0) > 0);
  });
});
