// Human formats for simulated times and shares, shared by decorations, views and the renderer.

/** `0.8 µs`, `900.2 µs`, `1.52 ms`, `2.10 s`: three significant-ish digits, unit chosen by size. */
export function formatDuration(us: number): string {
  if (!Number.isFinite(us)) return "–";
  const abs = Math.abs(us);
  if (abs < 1000) return `${us.toFixed(1)} µs`;
  if (abs < 1_000_000) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1_000_000).toFixed(2)} s`;
}

/** A 0..1 share as a percentage with one decimal: `59.1%`. */
export function formatShare(share: number): string {
  if (!Number.isFinite(share)) return "–";
  return `${(share * 100).toFixed(1)}%`;
}

/** `1 op`, `30 ops`. */
export function formatOpCount(n: number): string {
  return counted(n, "op");
}

/** `1 stream`, `2 streams`, `0 allocations`: a count with its noun in the right number. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** Byte counts in binary units: `512 B`, `1.5 KiB`, `64.0 GiB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}
