// Turns a per-line profile into editor decorations: end-of-line text, a shade level by share, and a
// hover that breaks the line's time down by op and bound. Pure; decorations.ts applies the result.
import { formatDuration, formatOpCount, formatShare } from "../profile/format";
import type { LineStat, Profile } from "../profile/model";

/** Number of shade levels; level i gets its own decoration type (darker = larger share). */
export const SHADE_LEVELS = 5;
/** Lower share bound of levels 1..4; below the first a line gets level 0 (faintest). */
const SHADE_THRESHOLDS = [0.05, 0.15, 0.3, 0.5] as const;

export interface LineDecoration {
  /** File path exactly as the profile gives it. */
  file: string;
  /** 0-based line, as editors count. */
  line: number;
  /** End-of-line text, e.g. `30 ops · 900.2 µs · 59.1%`. */
  text: string;
  /** The line's share of the run, 0..1. */
  share: number;
  /** 0..SHADE_LEVELS-1 */
  shade: number;
  /** Markdown hover. */
  hover: string;
}

export function shadeFor(share: number): number {
  let level = 0;
  for (const t of SHADE_THRESHOLDS) if (share >= t) level++;
  return level;
}

export function lineText(l: LineStat): string {
  return `${formatOpCount(l.op_count)} · ${formatDuration(l.total_us)} · ${formatShare(l.share)}`;
}

/** Escapes text for a Markdown table cell (pipes and backslashes; newlines would end the row). */
function cell(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/[\r\n]+/g, " ");
}

export function hoverMarkdown(l: LineStat, device: string): string {
  const head =
    `**Ascend Lens** · ${cell(device)} (emulated)\n\n` +
    `${formatOpCount(l.op_count)}, ${formatDuration(l.total_us)} simulated, ` +
    `${formatShare(l.share)} of the run; mostly **${cell(l.bound)}**-bound\n\n`;
  if (l.top_ops.length === 0) return head;
  const rows = l.top_ops.map((op) => {
    const ofLine = l.total_us > 0 ? op.total_us / l.total_us : 0;
    return `| ${cell(op.op_type)} | ${op.count} | ${formatDuration(op.total_us)} | ${formatShare(ofLine)} | ${cell(op.bound)} |`;
  });
  const shown = l.top_ops.reduce((n, op) => n + op.count, 0);
  const rest = l.op_count - shown;
  const tail = rest > 0 ? `\n\n…and ${formatOpCount(rest)} of other types` : "";
  return `${head}| op | count | time | of line | bound |\n|---|---:|---:|---:|---|\n${rows.join("\n")}${tail}`;
}

/**
 * Decorations grouped by file key. `keyOf` maps a profile path to the key the caller looks editors up
 * by (e.g. a normalised fsPath); entries sharing a key and line (paths spelt
 * differently) keep the one with the larger share.
 */
export function decorationsByFile(
  profile: Profile,
  keyOf: (file: string) => string = (f) => f,
): Map<string, LineDecoration[]> {
  const out = new Map<string, Map<number, LineDecoration>>();
  for (const l of profile.lines) {
    const key = keyOf(l.file);
    let byLine = out.get(key);
    if (!byLine) out.set(key, (byLine = new Map<number, LineDecoration>()));
    const line = l.line - 1;
    const prev = byLine.get(line);
    const share = Math.min(1, Math.max(0, l.share));
    if (prev && prev.share >= share) continue;
    byLine.set(line, {
      file: l.file,
      line,
      text: lineText(l),
      share,
      shade: shadeFor(share),
      hover: hoverMarkdown(l, profile.device),
    });
  }
  const result = new Map<string, LineDecoration[]>();
  for (const [key, byLine] of out) result.set(key, [...byLine.values()].sort((a, b) => a.line - b.line));
  return result;
}

