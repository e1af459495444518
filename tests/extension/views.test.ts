import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { socName } from "../../extension/common/deviceNames";
import { allocationsText, configuredDevices, memoryText, parseDevicesState, problemsText, streamsText, streamText } from "../../extension/views/devicesModel";
import { codeOf, countByRule, type DiagnosticRecord } from "../../extension/views/problemsModel";

// Shaped like npu_runtime/state.py's `ascend-lens.state/1` document.
const STATE = {
  schema: "ascend-lens.state/1",
  started: true,
  device: "910B",
  soc_name: "Ascend910B2",
  device_count: 2,
  initialized: true,
  devices: [
    {
      id: 0,
      host_us: 12.5,
      memory: { capacity: 64 * 1024 ** 3, used: 3 * 1024 ** 2, peak: 4 * 1024 ** 2, free: 1, largest_free_block: 1, fragmentation: 0, allocations: 2 },
      streams: [
        { id: 0, handle: 1, default: true, ready_us: 1523.4, pending: 0 },
        { id: 1, handle: 2, default: false, ready_us: 10, pending: 3 },
      ],
    },
    { id: 1, host_us: 0, memory: { capacity: 64 * 1024 ** 3, used: 0, peak: 0, allocations: 0 }, streams: [] },
  ],
  findings: [],
  finding_count: 1,
  error_count: 2,
};

describe("devices state", () => {
  it("reads the kernel's state document", () => {
    const snap = parseDevicesState(STATE, "kernel");
    assert.ok(snap);
    assert.equal(snap.origin, "kernel");
    assert.equal(snap.findings, 1);
    assert.equal(snap.errors, 2);
    assert.equal(snap.devices.length, 2);
    const d0 = snap.devices[0]!;
    assert.equal(d0.name, "Ascend910B2");
    assert.equal(memoryText(d0), "memory: 3.0 MiB / 64.0 GiB (0.0%, peak 4.0 MiB)");
    assert.equal(d0.allocations, 2);
    assert.deepEqual(d0.streams.map(streamText), ["stream 0 (default) · at 1.52 ms · 0 pending", "stream 1 · at 10.0 µs · 3 pending"]);
  });

  it("refuses what is not a state document", () => {
    assert.equal(parseDevicesState({ type: "error", message: "x" }, "kernel"), undefined);
    assert.equal(parseDevicesState(null, "debug"), undefined);
  });

  it("shows the configured devices before any run, named as the runtime names them after", () => {
    const snap = configuredDevices("910B", 2);
    assert.deepEqual(snap.devices.map((d) => [d.id, d.name, d.current]), [[0, "Ascend910B2", true], [1, "Ascend910B2", false]]);
    assert.equal(snap.devices[0]!.name, parseDevicesState(STATE, "kernel")!.devices[0]!.name);
    assert.equal(memoryText(snap.devices[0]!), "memory: not reported");
  });

  it("names every profile and alias by its SoC, from the runtime's device table", () => {
    assert.equal(socName("910B"), "Ascend910B2");
    assert.equal(socName("ascend910b4"), "Ascend910B4");
    assert.equal(socName("910B4"), "Ascend910B4");
    assert.equal(socName("310P"), "Ascend310P3");
    assert.equal(socName("910C"), "Ascend910_9382");
    assert.equal(socName("H100"), "H100"); // unknown: as configured (the runtime refuses it at start)
  });

  it("counts streams, allocations and problems in the right number", () => {
    const [d0, d1] = parseDevicesState(STATE, "kernel")!.devices;
    assert.equal(streamsText(d0!), "2 streams");
    assert.equal(streamsText({ ...d0!, streams: d0!.streams.slice(0, 1) }), "1 stream");
    assert.equal(allocationsText(d0!), "2 allocations");
    assert.equal(allocationsText({ ...d1!, allocations: 1 }), "1 allocation");
    assert.equal(problemsText(parseDevicesState(STATE, "kernel")!), "2 runtime errors, 1 sanitizer finding");
    assert.equal(problemsText(configuredDevices("910B", 1)), undefined);
  });
});

describe("problems by rule", () => {
  const d = (uri: string, line: number, code: unknown, source = "ascend-lens", severity = 1): DiagnosticRecord => ({ uri, line, code, source, severity, message: `m${line}` });

  it("counts only this extension's diagnostics, per code, in natural code order", () => {
    const counts = countByRule([
      d("file:///b.py", 3, "MS101"),
      d("file:///a.py", 9, "MS101", "ascend-lens", 0),
      d("file:///a.py", 1, { value: "NPU201", target: "https://x" }),
      d("file:///a.py", 2, "MS20"),
      d("file:///a.py", 2, "E501", "ruff"),
    ]);
    assert.deepEqual(counts.map((c) => [c.code, c.count, c.files, c.severity]), [
      ["MS20", 1, 1, 1],
      ["MS101", 2, 2, 0],
      ["NPU201", 1, 1, 1],
    ]);
    assert.deepEqual(counts[1]!.items.map((i) => [i.uri, i.line]), [["file:///a.py", 9], ["file:///b.py", 3]]);
  });

  it("filters to one rule", () => {
    const counts = countByRule([d("file:///a.py", 1, "MS101"), d("file:///a.py", 2, "NPU201")], "NPU201");
    assert.deepEqual(counts.map((c) => c.code), ["NPU201"]);
  });

  it("reads codes in every form VS Code has them", () => {
    assert.equal(codeOf("MS101"), "MS101");
    assert.equal(codeOf(301), "301");
    assert.equal(codeOf({ value: "HCCL301", target: {} }), "HCCL301");
    assert.equal(codeOf(undefined), undefined);
  });
});
