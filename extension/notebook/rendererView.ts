// HTML for the `application/vnd.ascend-lens.profile+json` notebook renderer: a time split by line
// (one bar, segments sized by share and coloured by bound) and the per-line table. Pure string
// building, so it is tested in node; renderer.ts only puts it into the output element.
import { formatDuration, formatOpCount, formatShare } from "../profile/format";
import { parseProfile, ProfileFormatError, PROFILE_MIME, type Profile } from "../profile/model";

/** Colours per bound, chosen to read on light and dark themes alike. */
export const BOUND_COLORS: Readonly<Record<string, string>> = {
  cube: "#d9534f",
  vector: "#f0ad4e",
  memory: "#5bc0de",
  launch: "#9b59b6",
  aicpu: "#5cb85c",
  link: "#2c7fb8",
};
const OTHER_COLOR = "#999999";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return i >= 0 ? path.slice(i + 1) : path;
}

const STYLE = `
.al-profile { font-family: var(--vscode-font-family, sans-serif); font-size: 12px; }
.al-profile .al-head { margin: 4px 0 6px; }
.al-profile .al-split { display: flex; height: 14px; width: 100%; border-radius: 2px; overflow: hidden; background: rgba(128,128,128,.15); }
.al-profile .al-split > span { display: block; height: 100%; min-width: 1px; }
.al-profile .al-legend span { margin-right: 10px; }
.al-profile .al-legend i { display: inline-block; width: 9px; height: 9px; margin-right: 3px; }
.al-profile table { border-collapse: collapse; margin-top: 8px; }
.al-profile th, .al-profile td { padding: 2px 8px; text-align: left; border-bottom: 1px solid rgba(128,128,128,.25); }
.al-profile td.num { text-align: right; font-variant-numeric: tabular-nums; }
.al-profile .al-bar { display: inline-block; height: 8px; vertical-align: middle; margin-right: 4px; }
`;

function colorOf(bound: string): string {
  return BOUND_COLORS[bound] ?? OTHER_COLOR;
}

/** `train.py:42`, or `line 5` for a line of the notebook cell itself (its file is IPython's cache name). */
export function lineLabel(file: string, line: number, cellFile?: string): string {
  return cellFile !== undefined && file === cellFile ? `line ${line}` : `${baseName(file)}:${line}`;
}

/**
 * Renders a validated profile; `maxRows` caps the table (the rest is summarised in one row).
 * `cellFile` is the file name the kernel compiled the cell under (output metadata `cell_file`).
 */
export function renderProfileHtml(profile: Profile, maxRows = 30, cellFile?: string): string {
  const head =
    `<div class="al-head"><b>${escapeHtml(profile.device)}</b> (emulated) · ` +
    `${formatOpCount(profile.op_count)} · ${formatDuration(profile.total_us)} simulated device time</div>`;

  const segments = profile.lines
    .filter((l) => l.share > 0)
    .map((l) => {
      const title = `${lineLabel(l.file, l.line, cellFile)} · ${formatDuration(l.total_us)} · ${formatShare(l.share)} · ${l.bound}`;
      return `<span style="width:${(Math.min(1, l.share) * 100).toFixed(2)}%;background:${colorOf(l.bound)}" title="${escapeHtml(title)}"></span>`;
    })
    .join("");
  const bounds = [...new Set(profile.lines.map((l) => l.bound))];
  const legend = bounds.map((b) => `<span><i style="background:${colorOf(b)}"></i>${escapeHtml(b)}</span>`).join("");
  const split = `<div class="al-split" role="img" aria-label="device time by line">${segments}</div><div class="al-legend">${legend}</div>`;

  const rows = profile.lines.slice(0, maxRows).map((l) => {
    const ops = l.top_ops.map((op) => `${escapeHtml(op.op_type)}×${op.count}`).join(", ");
    const bar = `<span class="al-bar" style="width:${Math.round(Math.min(1, l.share) * 60)}px;background:${colorOf(l.bound)}"></span>`;
    return (
      `<tr><td title="${escapeHtml(l.file)}">${escapeHtml(lineLabel(l.file, l.line, cellFile))}</td>` +
      `<td class="num">${l.op_count}</td><td class="num">${formatDuration(l.total_us)}</td>` +
      `<td>${bar}${formatShare(l.share)}</td><td>${escapeHtml(l.bound)}</td><td>${ops}</td></tr>`
    );
  });
  const hidden = profile.lines.length - maxRows;
  if (hidden > 0) rows.push(`<tr><td colspan="6">… ${hidden} more lines</td></tr>`);
  const table =
    profile.lines.length === 0
      ? `<div>No work was launched from a user source line.</div>`
      : `<table><thead><tr><th>line</th><th>ops</th><th>time</th><th>share</th><th>bound</th><th>top ops</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;

  return `<style>${STYLE}</style><div class="al-profile">${head}${split}${table}</div>`;
}

/** `cell_file` from the output's metadata (`{"cell_file": ...}` or keyed by the MIME type). */
export function cellFileOf(metadata: unknown, mime: string = PROFILE_MIME): string | undefined {
  if (typeof metadata !== "object" || metadata === null) return undefined;
  const md = metadata as Record<string, unknown>;
  const inner = typeof md[mime] === "object" && md[mime] !== null ? (md[mime] as Record<string, unknown>) : md;
  return typeof inner.cell_file === "string" ? inner.cell_file : undefined;
}

/** Renders any value: a valid profile, or a readable message saying why it is not one. */
export function renderOutputHtml(value: unknown, cellFile?: string): string {
  try {
    return renderProfileHtml(parseProfile(value), 30, cellFile);
  } catch (err) {
    const why = err instanceof ProfileFormatError ? err.message : String(err);
    return `<div class="al-profile al-error">Cannot show this Ascend Lens profile: ${escapeHtml(why)}</div>`;
  }
}
