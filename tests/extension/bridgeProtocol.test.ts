import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BridgeSession, decodeMessage, encodeRequest, LineDecoder, type CellOutput, type Notice } from "../../extension/notebook/bridgeProtocol";

describe("LineDecoder", () => {
  it("joins lines split across chunks and drops blank lines", () => {
    const d = new LineDecoder();
    assert.deepEqual(d.push('{"a":'), []);
    assert.deepEqual(d.push('1}\n\n{"b":2}\r\n{"c"'), ['{"a":1}', '{"b":2}']);
    assert.deepEqual(d.push(":3}"), []);
    assert.deepEqual(d.flush(), ['{"c":3}']);
    assert.deepEqual(d.flush(), []);
  });
});

describe("decodeMessage (the bridge's messages, docs/kernel.md)", () => {
  it("routes outputs to their request", () => {
    assert.deepEqual(decodeMessage('{"type":"output","id":"r1","output":{"output_type":"stream","name":"stdout","text":"hi\\n"}}'), {
      to: "r1",
      output: { kind: "stream", name: "stdout", text: "hi\n" },
    });
    assert.deepEqual(
      decodeMessage('{"type":"output","id":"r1","output":{"output_type":"execute_result","execution_count":3,"data":{"text/plain":["a\\n","b"]},"metadata":{}}}'),
      { to: "r1", output: { kind: "display", data: { "text/plain": "a\nb" }, metadata: {}, executionCount: 3 } },
    );
    assert.deepEqual(
      decodeMessage('{"type":"output","id":"r2","output":{"output_type":"error","ename":"AclError","evalue":"507011","traceback":["t1","t2"]}}'),
      { to: "r2", output: { kind: "error", ename: "AclError", evalue: "507011", traceback: ["t1", "t2"] } },
    );
  });

  it("keeps JSON MIME values as objects", () => {
    const d = decodeMessage(
      JSON.stringify({ type: "output", id: 5, output: { output_type: "display_data", data: { "application/vnd.ascend-lens.profile+json": { schema: "x" }, "text/plain": "p" }, metadata: {} } }),
    );
    assert.ok("output" in d && d.output.kind === "display");
    assert.equal(d.to, "5");
    assert.deepEqual(d.output.data["application/vnd.ascend-lens.profile+json"], { schema: "x" });
  });

  it("decodes replies, clear_output and bridge-level events", () => {
    assert.deepEqual(decodeMessage('{"type":"reply","id":"r1","status":"ok","execution_count":4}'), { to: "r1", reply: { status: "ok", executionCount: 4 } });
    assert.deepEqual(decodeMessage('{"type":"reply","id":"r1","status":"aborted","reason":"restart"}'), { to: "r1", reply: { status: "aborted", message: "restart" } });
    assert.deepEqual(decodeMessage('{"type":"clear_output","id":"r1","wait":true}'), { to: "r1", output: { kind: "clear", wait: true } });
    assert.deepEqual(decodeMessage('{"type":"died","exit_code":-9}'), { notice: { kind: "died", exitCode: -9 } });
    assert.deepEqual(decodeMessage('{"type":"error","id":null,"message":"cannot start kernel"}'), { notice: { kind: "failure", message: "cannot start kernel" } });
    assert.deepEqual(decodeMessage('{"type":"error","id":"r3","message":"\\"execute\\" needs a string \\"code\\""}'), {
      to: "r3",
      reply: { status: "error", message: '"execute" needs a string "code"' },
    });
    const ready = decodeMessage('{"type":"ready","kernel":"ascend-npu"}');
    assert.ok("notice" in ready && ready.notice.kind === "ready");
    assert.deepEqual(decodeMessage('{"type":"state","state":{"devices":[]}}'), { notice: { kind: "state", state: { devices: [] } } });
  });

  it("classifies garbage instead of throwing", () => {
    assert.deepEqual(decodeMessage("not json"), { invalid: "not JSON: not json" });
    assert.deepEqual(decodeMessage('{"id":"r1"}'), { invalid: 'no "type": {"id":"r1"}' });
    assert.deepEqual(decodeMessage('{"type":"teleport"}'), { invalid: 'unknown message type "teleport"' });
    assert.deepEqual(decodeMessage('{"type":"reply","status":"ok"}'), { invalid: '"reply" without "id"' });
    assert.deepEqual(decodeMessage('{"type":"output","id":"r1","output":{"output_type":"weird"}}'), { invalid: 'unknown output_type "weird"' });
  });

  it("encodes one request per line", () => {
    assert.equal(encodeRequest({ id: "r1", type: "execute", code: "a\nb" }), '{"id":"r1","type":"execute","code":"a\\nb"}\n');
  });
});

describe("BridgeSession", () => {
  function session(): { s: BridgeSession; sent: Record<string, unknown>[]; notices: Notice[]; invalid: string[] } {
    const sent: Record<string, unknown>[] = [];
    const notices: Notice[] = [];
    const invalid: string[] = [];
    const s = new BridgeSession((line) => sent.push(JSON.parse(line) as Record<string, unknown>), (n) => notices.push(n), (w) => invalid.push(w));
    return { s, sent, notices, invalid };
  }

  it("delivers outputs in order and resolves on the reply", async () => {
    const { s, sent } = session();
    const outputs: CellOutput[] = [];
    const done = s.execute("print(1)", { output: (o) => outputs.push(o) });
    assert.deepEqual(sent, [{ id: "r1", type: "execute", code: "print(1)" }]);
    assert.equal(s.inFlight, 1);
    s.receive('{"type":"output","id":"r1","output":{"output_type":"stream","name":"stdout","text":"1\\n"}}');
    s.receive('{"type":"output","id":"r1","output":{"output_type":"stream","name":"stderr","text":"w\\n"}}');
    s.receive('{"type":"reply","id":"r1","status":"ok","execution_count":1}');
    assert.deepEqual(await done, { status: "ok", executionCount: 1 });
    assert.deepEqual(outputs.map((o) => o.kind === "stream" && o.name), ["stdout", "stderr"]);
    assert.equal(s.inFlight, 0);
  });

  it("keeps concurrent requests apart by id", async () => {
    const { s } = session();
    const a: CellOutput[] = [];
    const b: CellOutput[] = [];
    const pa = s.execute("a", { output: (o) => a.push(o) });
    const pb = s.execute("b", { output: (o) => b.push(o) });
    s.receive('{"type":"output","id":"r2","output":{"output_type":"stream","name":"stdout","text":"B"}}');
    s.receive('{"type":"reply","id":"r2","status":"error","execution_count":2}');
    s.receive('{"type":"output","id":"r1","output":{"output_type":"stream","name":"stdout","text":"A"}}');
    s.receive('{"type":"reply","id":"r1","status":"ok"}');
    assert.deepEqual(await pb, { status: "error", executionCount: 2 });
    assert.deepEqual(await pa, { status: "ok" });
    assert.equal(a.length, 1);
    assert.equal(b.length, 1);
  });

  it("reports messages for unknown requests and bad lines, and passes notices on", () => {
    const { s, notices, invalid } = session();
    s.receive('{"type":"reply","id":"r9","status":"ok"}');
    s.receive("{oops");
    s.receive('{"type":"died","exit_code":1}');
    assert.deepEqual(invalid, ['message for unknown request "r9"', "not JSON: {oops"]);
    assert.deepEqual(notices, [{ kind: "died", exitCode: 1 }]);
  });

  it("fails waiting and later requests once closed", async () => {
    const { s } = session();
    const p = s.execute("x", { output: () => undefined });
    s.close(new Error("the kernel bridge exited with code 1"));
    await assert.rejects(p, { message: "the kernel bridge exited with code 1" });
    await assert.rejects(s.request("interrupt"), { message: "the kernel bridge exited with code 1" });
  });
});
