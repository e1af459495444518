import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { kernelInstallArgs, runArgs } from "../../extension/commands/cliCommands";

describe("command lines", () => {
  const devices = { deviceProfile: "910B4", deviceCount: 2 };
  it("runs a file with a profile directory (ascend-lens run --profile DIR SCRIPT)", () => {
    assert.deepEqual(runArgs(devices, "/tmp/prof", "/ws/a.py"), [
      "-m", "ascend_lens", "run", "--device", "910B4", "--devices", "2", "--profile", "/tmp/prof", "/ws/a.py",
    ]);
  });
  it("installs the kernelspec into the interpreter's prefix or for the user", () => {
    assert.deepEqual(kernelInstallArgs("sys-prefix", devices), [
      "-m", "ascend_lens", "kernel", "install", "--sys-prefix", "--device", "910B4", "--devices", "2",
    ]);
    assert.equal(kernelInstallArgs("user", devices)[4], "--user");
  });
});
