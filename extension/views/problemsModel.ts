// Counts this extension's diagnostics per rule for the "Problems by rule" view. Pure: it takes
// plain records, so the view can feed it from `vscode.languages.getDiagnostics()`.

/** Diagnostics published by `ascend-lens server` carry this source. */
export const DIAGNOSTIC_SOURCE = "ascend-lens";

export interface DiagnosticRecord {
  uri: string;
  line: number;
  message: string;
  source?: string;
  /** string | number | {value, target} as VS Code has it. */
  code?: unknown;
  severity: number;
}

export interface RuleCount {
  code: string;
  count: number;
  files: number;
  /** Lowest (most severe) severity among its diagnostics, VS Code numbering (0 = error). */
  severity: number;
  items: DiagnosticRecord[];
}

export function codeOf(code: unknown): string | undefined {
  if (typeof code === "string" || typeof code === "number") return String(code);
  if (typeof code === "object" && code !== null && "value" in code) {
    const v = (code as { value: unknown }).value;
    if (typeof v === "string" || typeof v === "number") return String(v);
  }
  return undefined;
}

/** Groups ours (by source) per rule code, sorted by code; items sorted by file then line. */
export function countByRule(diagnostics: Iterable<DiagnosticRecord>, filter?: string): RuleCount[] {
  const byCode = new Map<string, DiagnosticRecord[]>();
  for (const d of diagnostics) {
    if (d.source !== DIAGNOSTIC_SOURCE) continue;
    const code = codeOf(d.code) ?? "(no code)";
    if (filter !== undefined && code !== filter) continue;
    let list = byCode.get(code);
    if (!list) byCode.set(code, (list = []));
    list.push(d);
  }
  return [...byCode.entries()]
    .sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))
    .map(([code, items]) => ({
      code,
      count: items.length,
      files: new Set(items.map((d) => d.uri)).size,
      severity: Math.min(...items.map((d) => d.severity)),
      items: items.sort((a, b) => a.uri.localeCompare(b.uri) || a.line - b.line),
    }));
}
