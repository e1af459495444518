// "Show Rule Documentation": the rule's page (docs/rules/<CODE>.md in the workspace when present,
// otherwise the rule's own docstring from the installed package) in the Markdown preview.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { log } from "../common/log";
import { describeFailure, runProcess } from "../common/process";
import { codeOf, DIAGNOSTIC_SOURCE } from "../views/problemsModel";
import { ruleMarkdown, RULE_DOC_SCRIPT } from "./ruleDocsCore";

export const RULE_DOC_SCHEME = "ascend-lens-rule";

async function query(python: string, code?: string): Promise<Record<string, unknown>> {
  const r = await runProcess(python, ["-c", RULE_DOC_SCRIPT, ...(code ? [code] : [])], { timeoutMs: 30_000 });
  if (r.code !== 0) throw new Error(describeFailure(python, r));
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

/** Serves `ascend-lens-rule:/MS101.md` from the installed package. */
export class RuleDocProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly python: () => Promise<string>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const code = path.basename(uri.path, ".md");
    try {
      return ruleMarkdown(code, await query(await this.python(), code));
    } catch (err) {
      return `# ${code}\n\nThe rule documentation could not be read: ${String(err)}`;
    }
  }
}

/** The code of an Ascend Lens diagnostic under the cursor, if any. */
function codeAtCursor(): string | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return undefined;
  const pos = editor.selection.active;
  const diags = vscode.languages.getDiagnostics(editor.document.uri).filter((d) => d.source === DIAGNOSTIC_SOURCE);
  const here = diags.find((d) => d.range.contains(pos)) ?? diags.find((d) => d.range.start.line === pos.line);
  return here ? codeOf(here.code) : undefined;
}

export async function showRuleDocumentation(python: () => Promise<string>, code?: unknown): Promise<void> {
  let rule = typeof code === "string" ? code : codeAtCursor();
  if (!rule) {
    try {
      const info = await query(await python());
      const rules = Array.isArray(info.rules) ? (info.rules as { code: string; name: string; summary: string }[]) : [];
      const pick = await vscode.window.showQuickPick(
        rules.map((r) => ({ label: r.code, description: r.name, detail: r.summary })),
        { placeHolder: "Rule to show", matchOnDescription: true, matchOnDetail: true },
      );
      rule = pick?.label;
    } catch (err) {
      log.error(`Listing rules: ${String(err)}`);
      void vscode.window.showErrorMessage(`Ascend Lens: cannot list the rules: ${String(err)}`);
      return;
    }
  }
  if (!rule) return;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const page = path.join(folder.uri.fsPath, "docs", "rules", `${rule}.md`);
    if (fs.existsSync(page)) {
      await vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.file(page));
      return;
    }
  }
  await vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.from({ scheme: RULE_DOC_SCHEME, path: `/${rule}.md` }));
}
