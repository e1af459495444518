import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { BridgeClient } from "../../extension/notebook/bridgeClient";
import type { CellOutput, Notice } from "../../extension/notebook/bridgeProtocol";

// Bundled to out/tests/extension/; the fixture stays in the source tree.
const FAKE = join(__dirname, "..", "..", "..", "tests", "extension", "fixtures", "fake_bridge.js");

function start(env: NodeJS.ProcessEnv = {}): { client: BridgeClient; logs: string[]; exits: string[]; notices: Notice[] } {
  const logs: string[] = [];
  const exits: string[] = [];
  const notices: Notice[] = [];
  const client = new BridgeClient({
    command: process.execPath,
    args: [FAKE],
    env: { ...process.env, ...env },
    onLog: (l) => logs.push(l),
    onExit: (r) => exits.push(r),
    onNotice: (n) => notices.push(n),
  });
  return { client, logs, exits, notices };
}

describe("BridgeClient against a bridge process", () => {
  it("executes cells and shuts the process down", async () => {
    const { client, logs, exits, notices } = start();
    const outputs: CellOutput[] = [];
    const reply = await client.execute("x = 1", { output: (o) => outputs.push(o) });
    assert.deepEqual(reply, { status: "ok", executionCount: 1 });
    assert.deepEqual(outputs, [
      { kind: "stream", name: "stdout", text: "ran x = 1\n" },
      { kind: "display", data: { "text/plain": "1" }, metadata: {}, executionCount: 1 },
    ]);
    const err: CellOutput[] = [];
    assert.deepEqual(await client.execute("raise", { output: (o) => err.push(o) }), { status: "error", executionCount: 2 });
    assert.equal(err[0]?.kind, "error");
    assert.deepEqual(await client.restart(), { status: "ok" });
    assert.deepEqual(await client.interrupt(), { status: "ok" });
    assert.deepEqual(await client.requestState(), { status: "ok" });
    await client.dispose();
    assert.equal(client.running, false);
    assert.deepEqual(logs, ["fake bridge starting"]);
    assert.deepEqual(notices.map((n) => n.kind), ["ready", "state"]);
    assert.deepEqual(exits, ["the kernel bridge exited with code 0"]);
  });

  it("fails the running cell when the bridge dies", async () => {
    const { client } = start();
    await assert.rejects(client.execute("exit", { output: () => undefined }), { name: "BridgeExitedError", message: "the kernel bridge exited with code 3" });
    await assert.rejects(client.execute("x", { output: () => undefined }), { name: "BridgeExitedError" });
  });

  it("explains a bridge that cannot start with its own message", async () => {
    const { client } = start({ FAKE_BRIDGE_FAIL: "1" });
    await assert.rejects(client.waitReady(), {
      message: "the kernel bridge exited with code 1: cannot start kernel 'ascend-npu': no such kernel",
    });
  });

  it("reports a missing interpreter instead of hanging", async () => {
    const client = new BridgeClient({ command: "/nonexistent/python3", args: [] });
    await assert.rejects(client.waitReady(), (e: Error) => e.message.startsWith("could not start /nonexistent/python3: spawn /nonexistent/python3 ENOENT"));
  });
});
