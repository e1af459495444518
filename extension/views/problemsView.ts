// "Problems by rule": counts of this extension's diagnostics per rule code. Selecting a rule filters
// the view to that rule's occurrences; selecting an occurrence opens it.
import * as vscode from "vscode";
import { MODULE } from "../common/constants";
import { countByRule, type DiagnosticRecord, type RuleCount } from "./problemsModel";

type Node = { kind: "rule"; rule: RuleCount } | { kind: "item"; item: DiagnosticRecord };

const FILTERED_CONTEXT = `${MODULE}.problems.filtered`;

/** The rule code of a node of this view, as menu commands receive it. */
export function ruleCodeOfNode(node: unknown): string | undefined {
  const n = node as Partial<Node> | undefined;
  return n?.kind === "rule" && n.rule ? n.rule.code : undefined;
}

export class ProblemsByRuleView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: vscode.Disposable;
  private filter: string | undefined;
  private rules: RuleCount[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    // Diagnostics arrive per document in bursts; recount at most every 200 ms.
    this.sub = vscode.languages.onDidChangeDiagnostics(() => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.recount(), 200);
    });
    this.recount();
  }

  /** Current counts (also what the e2e tests read through a command). */
  get counts(): RuleCount[] {
    return this.rules;
  }

  get activeFilter(): string | undefined {
    return this.filter;
  }

  setFilter(code: string | undefined): void {
    this.filter = code;
    void vscode.commands.executeCommand("setContext", FILTERED_CONTEXT, code !== undefined);
    this.recount();
  }

  private recount(): void {
    const records: DiagnosticRecord[] = [];
    for (const [uri, diags] of vscode.languages.getDiagnostics()) {
      for (const d of diags) {
        records.push({ uri: uri.toString(), line: d.range.start.line, message: d.message, source: d.source, code: d.code, severity: d.severity });
      }
    }
    this.rules = countByRule(records, this.filter);
    this.emitter.fire();
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.rules.map((rule) => ({ kind: "rule", rule }));
    if (node.kind === "rule") return node.rule.items.map((item) => ({ kind: "item", item }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "rule") {
      const r = node.rule;
      const filtered = this.filter === r.code;
      const item = new vscode.TreeItem(r.code, filtered ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed);
      item.description = `${r.count} in ${r.files} file${r.files === 1 ? "" : "s"}`;
      item.contextValue = "rule";
      item.iconPath = new vscode.ThemeIcon(r.severity === 0 ? "error" : r.severity === 1 ? "warning" : "info");
      item.command = { command: `${MODULE}.problems.filter`, title: "Filter by rule", arguments: [r.code] };
      return item;
    }
    const d = node.item;
    const uri = vscode.Uri.parse(d.uri);
    const item = new vscode.TreeItem(d.message);
    item.description = `${vscode.workspace.asRelativePath(uri)}:${d.line + 1}`;
    item.tooltip = d.message;
    const pos = new vscode.Position(d.line, 0);
    item.command = { command: "vscode.open", title: "Open", arguments: [uri, { selection: new vscode.Range(pos, pos) }] };
    return item;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.sub.dispose();
    this.emitter.dispose();
  }
}
