// Reads the emulated runtime's state out of a stopped debuggee with one DAP `evaluate`, as an
// `ascend-lens.state/1` document for the Devices view. Pure: the expression and the parsing of
// the answer; adapterFactory.ts sends it when a session stops.

/**
 * One Python expression (DAP evaluate takes expressions, not statements) that returns the state
 * as a JSON string. It reads the runtime only when user code has already imported it, so a stop
 * before any NPU work does not start the runtime as a side effect.
 */
export const STATE_EXPRESSION = [
  "(lambda sys, json: json.dumps({'schema': 'ascend-lens.state/1', 'started': False, 'devices': []})",
  " if 'npu_runtime.core.runtime' not in sys.modules else (lambda rt: json.dumps({",
  "'schema': 'ascend-lens.state/1', 'started': True, 'soc_name': rt.profile.soc_name,",
  " 'devices': [{'id': d.id, 'memory': {'capacity': d.memory.capacity, 'used': d.memory.used,",
  " 'peak': d.memory.peak, 'allocations': len(d.memory.live)}, 'streams': [{'id': s.id,",
  " 'ready_us': round(s.ready_us, 3), 'pending': len(s.pending)}",
  " for s in sorted(d.streams.values(), key=lambda s: s.id)]} for _, d in sorted(rt.devices.items())]}))",
  "(sys.modules['npu_runtime.core.runtime'].get_runtime()))(__import__('sys'), __import__('json'))",
].join("");

/**
 * Parses an evaluate `result`: debugpy shows a str as its Python repr ('...'), so the quotes and
 * the repr escapes come off before the JSON is read. Returns undefined for anything else
 * (an error message, a truncated value).
 */
export function parseEvaluateResult(result: string): unknown {
  let text = result.trim();
  const q = text[0];
  if ((q === "'" || q === '"') && text.endsWith(q) && text.length >= 2) {
    text = text.slice(1, -1).replace(/\\(['"\\])/g, "$1");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
