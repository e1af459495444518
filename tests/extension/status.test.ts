import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Restarter } from "../../extension/common/restarter";
import { statusView } from "../../extension/common/statusModel";

describe("status bar", () => {
  const base = { deviceProfile: "910B", deviceCount: 1, interpreter: "/venv/bin/python" };
  it("shows the device profile and the server state", () => {
    assert.deepEqual(statusView({ ...base, state: "running" }), {
      text: "$(chip) Ascend910B2 $(check)",
      tooltip: "Ascend Lens: server running\nEmulated device: Ascend910B2\nInterpreter: /venv/bin/python\nClick for actions",
    });
    assert.equal(statusView({ ...base, deviceCount: 8, state: "starting" }).text, "$(chip) Ascend910B2 ×8 $(loading~spin)");
  });
  it("marks failures and a missing package", () => {
    const failed = statusView({ ...base, state: "failed", detail: "spawn python3 ENOENT" });
    assert.equal(failed.severity, "error");
    assert.match(failed.tooltip, /server failed to start\n.*\n.*\nspawn python3 ENOENT/);
    assert.equal(statusView({ ...base, state: "missing-package" }).severity, "warning");
  });
});

describe("Restarter", () => {
  it("collapses requests made during a restart into one more restart", async () => {
    let runs = 0;
    let release: () => void = () => undefined;
    const r = new Restarter(async () => {
      runs++;
      if (runs === 1) await new Promise<void>((res) => (release = res));
    });
    const first = r.now();
    const second = r.now();
    const third = r.now();
    release();
    await Promise.all([first, second, third]);
    assert.equal(runs, 2);
    await r.now();
    assert.equal(runs, 3);
  });

  it("debounces scheduled restarts", async () => {
    let runs = 0;
    const r = new Restarter(() => Promise.resolve(void runs++));
    r.schedule(5);
    r.schedule(5);
    r.schedule(5);
    await new Promise((res) => setTimeout(res, 30));
    assert.equal(runs, 1);
    r.dispose();
  });
});
