import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { describeFailure, PROBE_PACKAGE, runProcess } from "../../extension/common/process";

const VENV_PYTHON = join(__dirname, "..", "..", "..", ".venv", "bin", "python");

describe("runProcess", () => {
  it("collects output and the exit code", async () => {
    const r = await runProcess(process.execPath, ["-e", "process.stdout.write('out'); process.stderr.write('e1\\nlast words\\n'); process.exit(4)"]);
    assert.deepEqual({ code: r.code, stdout: r.stdout, timedOut: r.timedOut }, { code: 4, stdout: "out", timedOut: false });
    assert.equal(describeFailure("tool", r), "tool exited with code 4: last words");
  });

  it("says when a program cannot be started", async () => {
    const r = await runProcess("/nonexistent/python3", []);
    assert.equal(r.code, null);
    assert.equal(describeFailure("/nonexistent/python3", r), "/nonexistent/python3 could not be started: spawn /nonexistent/python3 ENOENT");
  });

  it("kills a process that overstays its timeout", async () => {
    const r = await runProcess(process.execPath, ["-e", "setTimeout(() => {}, 10000)"], { timeoutMs: 100 });
    assert.equal(r.timedOut, true);
    assert.equal(describeFailure("sleeper", r), "sleeper did not finish in time");
  });
});

describe("package probe", { skip: !existsSync(VENV_PYTHON) && "no .venv (run ./scripts/setup)" }, () => {
  it("finds ascend-lens in the project's venv", async () => {
    const r = await runProcess(VENV_PYTHON, ["-c", PROBE_PACKAGE]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), /^\d+\.\d+\.\d+/);
  });

  it("exits 3 where the package is missing", async () => {
    // -I: isolated mode, without the venv's site-packages or the working directory on sys.path.
    const r = await runProcess(VENV_PYTHON, ["-I", "-S", "-c", PROBE_PACKAGE]);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /PackageNotFoundError|ModuleNotFoundError/);
  });
});
