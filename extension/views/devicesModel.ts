// Device state as the kernel's `ascend-lens.state` comm (and the debug adapter) report it, parsed
// leniently into one shape for the Devices view. Pure.
import { socName } from "../common/deviceNames";
import { counted, formatBytes, formatDuration } from "../profile/format";

export interface StreamState {
  id: number | string;
  /** Simulated clock of the stream, µs, when reported. */
  clockUs?: number;
  /** Work queued but not yet synchronised, when reported. */
  pending?: number;
  isDefault?: boolean;
}

export interface DeviceState {
  id: number;
  name: string;
  memoryUsed?: number;
  memoryTotal?: number;
  memoryPeak?: number;
  allocations?: number;
  streams: StreamState[];
  current: boolean;
}

export interface DevicesSnapshot {
  /** Where it came from: "kernel", "debug" or "settings". */
  origin: string;
  devices: DeviceState[];
  /** Sanitizer findings and runtime errors so far, when reported. */
  findings?: number;
  errors?: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function firstNumber(o: Obj, keys: string[]): number | undefined {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === "number" && Number.isFinite(v)) return v;
  }
  return undefined;
}

function parseStream(v: unknown, i: number): StreamState {
  if (!isObj(v)) return { id: typeof v === "number" ? v : i };
  const s: StreamState = { id: typeof v.id === "number" || typeof v.id === "string" ? v.id : i };
  const clock = firstNumber(v, ["ready_us", "clock_us", "time_us"]);
  if (clock !== undefined) s.clockUs = clock;
  const pending = firstNumber(v, ["pending", "queued"]);
  if (pending !== undefined) s.pending = pending;
  if (v.default === true) s.isDefault = true;
  return s;
}

/**
 * Parses the `ascend-lens.state/1` document (docs/kernel.md): `{"soc_name", "devices": [{"id",
 * "memory": {"capacity", "used", "peak", "allocations"}, "streams": [{"id", "ready_us", "pending",
 * "default"}]}], "finding_count", "error_count"}`. Returns undefined for anything else.
 */
export function parseDevicesState(state: unknown, origin: string): DevicesSnapshot | undefined {
  if (!isObj(state) || !Array.isArray(state.devices)) return undefined;
  const current = firstNumber(state, ["current_device", "current"]);
  const soc = typeof state.soc_name === "string" ? state.soc_name : typeof state.device === "string" ? state.device : undefined;
  const devices = state.devices.filter(isObj).map((d, i): DeviceState => {
    const id = firstNumber(d, ["id", "device_id", "index"]) ?? i;
    const mem = isObj(d.memory) ? d.memory : d;
    const dev: DeviceState = {
      id,
      name: typeof d.name === "string" ? d.name : (soc ?? `device ${id}`),
      streams: Array.isArray(d.streams) ? d.streams.map(parseStream) : [],
      current: d.current === true || current === id,
    };
    const used = firstNumber(mem, ["used", "used_bytes", "memory_used"]);
    if (used !== undefined) dev.memoryUsed = used;
    const total = firstNumber(mem, ["capacity", "total", "total_bytes"]);
    if (total !== undefined) dev.memoryTotal = total;
    const peak = firstNumber(mem, ["peak"]);
    if (peak !== undefined) dev.memoryPeak = peak;
    const allocs = firstNumber(mem, ["allocations", "blocks", "live_allocations"]);
    if (allocs !== undefined) dev.allocations = allocs;
    return dev;
  });
  const snap: DevicesSnapshot = { origin, devices };
  const findings = firstNumber(state, ["finding_count"]);
  if (findings !== undefined) snap.findings = findings;
  const errors = firstNumber(state, ["error_count"]);
  if (errors !== undefined) snap.errors = errors;
  return snap;
}

/** What the view shows before any run: the configured devices (named as the runtime will name
 * them), nothing allocated. */
export function configuredDevices(profile: string, count: number): DevicesSnapshot {
  const devices: DeviceState[] = [];
  const name = socName(profile);
  for (let id = 0; id < count; id++) devices.push({ id, name, streams: [], current: id === 0 });
  return { origin: "settings", devices };
}

export function memoryText(d: DeviceState): string {
  if (d.memoryUsed === undefined && d.memoryTotal === undefined) return "memory: not reported";
  const used = formatBytes(d.memoryUsed ?? 0);
  if (d.memoryTotal === undefined || d.memoryTotal <= 0) return `memory: ${used} used`;
  const pct = ((100 * (d.memoryUsed ?? 0)) / d.memoryTotal).toFixed(1);
  const peak = d.memoryPeak !== undefined ? `, peak ${formatBytes(d.memoryPeak)}` : "";
  return `memory: ${used} / ${formatBytes(d.memoryTotal)} (${pct}%${peak})`;
}

/** The Streams node's label: `1 stream`, `3 streams`. */
export function streamsText(d: DeviceState): string {
  return counted(d.streams.length, "stream");
}

/** The memory node's description, when the report counts allocations. */
export function allocationsText(d: DeviceState): string | undefined {
  return d.allocations === undefined ? undefined : counted(d.allocations, "allocation");
}

/** What a device's tooltip adds when the report counts problems. */
export function problemsText(snap: DevicesSnapshot): string | undefined {
  if (snap.findings === undefined && snap.errors === undefined) return undefined;
  return `${counted(snap.errors ?? 0, "runtime error")}, ${counted(snap.findings ?? 0, "sanitizer finding")}`;
}

export function streamText(s: StreamState): string {
  const parts = [`stream ${s.id}${s.isDefault ? " (default)" : ""}`];
  if (s.clockUs !== undefined) parts.push(`at ${formatDuration(s.clockUs)}`);
  if (s.pending !== undefined) parts.push(`${s.pending} pending`);
  return parts.join(" · ");
}
