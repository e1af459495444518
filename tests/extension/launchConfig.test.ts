import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { adapterCommand, resolveLaunchConfig, type ResolveContext } from "../../extension/debug/launchConfig";

const ctx: ResolveContext = {
  activeFile: { path: "/ws/bad_memcpy.py", languageId: "python" },
  workspaceFolder: "/ws",
  interpreter: "/ws/.venv/bin/python",
  deviceProfile: "910B",
  deviceCount: 1,
};

describe("resolveLaunchConfig", () => {
  it("turns F5 without launch.json into a launch of the active Python file", () => {
    const r = resolveLaunchConfig({}, ctx);
    assert.ok("config" in r);
    assert.deepEqual(r.config, {
      type: "ascend-npu",
      request: "launch",
      name: "Ascend NPU: current file",
      program: "/ws/bad_memcpy.py",
      python: "/ws/.venv/bin/python",
      device: "910B",
      devices: 1,
      cwd: "/ws",
      args: [],
      sanitizer: true,
      profile: true,
      justMyCode: true,
      stopOnAclError: true,
    });
  });

  it("refuses F5 when the active file is not Python", () => {
    const r = resolveLaunchConfig({}, { ...ctx, activeFile: { path: "/ws/a.md", languageId: "markdown" } });
    assert.ok("error" in r && r.error.startsWith("Open a Python file"));
  });

  it("keeps what launch.json says and fills the rest", () => {
    const r = resolveLaunchConfig(
      { type: "ascend-npu", request: "launch", name: "x", program: "/ws/t.py", devices: 8, sanitizer: false, python: "/p" },
      ctx,
    );
    assert.ok("config" in r);
    assert.equal(r.config.devices, 8);
    assert.equal(r.config.sanitizer, false);
    assert.equal(r.config.python, "/p");
    assert.equal(r.config.device, "910B");
  });

  it("accepts a module instead of a program", () => {
    const r = resolveLaunchConfig({ type: "ascend-npu", request: "launch", name: "m", module: "pkg.train" }, { ...ctx, activeFile: undefined });
    assert.ok("config" in r);
    assert.equal(r.config.program, undefined);
    assert.equal(r.config.cwd, "/ws");
  });

  it("rejects attach, bad args and bad device counts with a message", () => {
    assert.deepEqual(resolveLaunchConfig({ type: "ascend-npu", request: "attach", name: "a" }, ctx), {
      error: 'Ascend NPU debugging supports "launch" only, not "attach".',
    });
    assert.deepEqual(resolveLaunchConfig({ type: "ascend-npu", request: "launch", name: "a", program: "/p.py", args: "x" as unknown as string[] }, ctx), {
      error: '"args" must be a list of strings.',
    });
    assert.deepEqual(resolveLaunchConfig({ type: "ascend-npu", request: "launch", name: "a", program: "/p.py", devices: 0 }, ctx), {
      error: '"devices" must be a positive integer.',
    });
  });

  it("starts the adapter through the interpreter", () => {
    assert.deepEqual(adapterCommand("/py"), { command: "/py", args: ["-m", "ascend_lens", "debug-adapter"] });
  });
});
