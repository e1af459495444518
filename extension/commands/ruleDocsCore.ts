// The rule documentation the installed package carries: a script that prints a rule's docstring
// (or the list of rules) as JSON, and its conversion to Markdown. Pure.

/** Prints {"code", "name", "doc"} for one code, or every rule's one-line summary when none is given. */
export const RULE_DOC_SCRIPT = `
import json, sys
from npu_lsp.registry import load_all
rules = load_all()
code = sys.argv[1] if len(sys.argv) > 1 else ""
if code:
    r = rules.get(code)
    if r is None:
        print(json.dumps({"error": "unknown rule " + code})); sys.exit(0)
    print(json.dumps({"code": r.code, "name": r.name, "doc": (r.__doc__ or "").strip()}))
else:
    print(json.dumps({"rules": [{"code": c, "name": r.name, "summary": r.summary()} for c, r in sorted(rules.items())]}))
`;

/** Removes the common indentation of a docstring's lines after the first. */
export function stripIndent(doc: string): string {
  const lines = doc.split("\n");
  const indents = lines.slice(1).filter((l) => l.trim()).map((l) => l.length - l.trimStart().length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [lines[0] ?? "", ...lines.slice(1).map((l) => l.slice(cut))].join("\n");
}

/** The Markdown page for one rule from the script's answer. */
export function ruleMarkdown(code: string, info: Record<string, unknown>): string {
  if (typeof info.error === "string") return `# ${code}\n\n${info.error}.`;
  const str = (v: unknown): string => (typeof v === "string" ? v : "");
  return `# ${str(info.code)} (${str(info.name)})\n\n${stripIndent(str(info.doc))}\n`;
}
