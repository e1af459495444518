// The Profile view: hot lines and top ops of the last run, debug session or cell. Selecting a line
// opens it; selecting an op opens the hottest line that launched it.
import * as path from "node:path";
import * as vscode from "vscode";
import { MODULE } from "../common/constants";
import { formatDuration, formatOpCount, formatShare } from "../profile/format";
import type { ProfileStore } from "../profile/store";
import { GROUPS, nodeId, refreshTarget, shouldFire, type ProfileNode as Node } from "./profileTree";

export const OPEN_LINE_COMMAND = `${MODULE}.profile.openLine`;

export class ProfileView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | Node[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subs: vscode.Disposable[] = [];
  private hadProfile = false;
  private visible = false;
  private stale = false;
  private disposed = false;

  constructor(private readonly store: ProfileStore) {
    this.hadProfile = store.current !== undefined;
    this.subs.push(store.onDidChange(() => this.changed()));
  }

  /** Creates the view for `viewId`; refreshes are sent only while it is visible. */
  createView(viewId: string): vscode.TreeView<Node> {
    const view = vscode.window.createTreeView(viewId, { treeDataProvider: this });
    this.visible = view.visible;
    this.subs.push(
      view,
      view.onDidChangeVisibility((e) => {
        this.visible = e.visible;
        if (this.stale && shouldFire(this.disposed, this.visible)) {
          this.stale = false;
          this.emitter.fire(undefined);
        }
      }),
    );
    return view;
  }

  private changed(): void {
    const has = this.store.current !== undefined;
    const target = refreshTarget(this.hadProfile, has);
    this.hadProfile = has;
    if (target === "none" || this.disposed) return;
    if (!shouldFire(this.disposed, this.visible)) {
      this.stale = true;
      return;
    }
    this.emitter.fire(target === "root" ? undefined : [...GROUPS]);
  }

  getChildren(node?: Node): Node[] {
    const entry = this.store.current;
    if (!entry) return [];
    if (!node) return [...GROUPS];
    if (node.kind !== "group") return [];
    return node.group === "lines"
      ? entry.profile.lines.map((line) => ({ kind: "line", line }))
      : entry.profile.top_ops.map((op) => ({ kind: "op", op }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    const entry = this.store.current;
    if (node.kind === "group") {
      const lines = node.group === "lines";
      const item = new vscode.TreeItem(lines ? "Hot lines" : "Top ops", vscode.TreeItemCollapsibleState.Expanded);
      item.id = nodeId(node);
      if (lines && entry) {
        item.description = `${entry.label} · ${entry.profile.device} · ${formatDuration(entry.profile.total_us)}`;
      }
      return item;
    }
    if (node.kind === "line") {
      const l = node.line;
      const cell = entry?.cell && entry.cell.file === l.file ? entry.cell : undefined;
      const item = new vscode.TreeItem(cell ? `cell ${cell.index + 1}:${l.line}` : `${path.basename(l.file)}:${l.line}`);
      item.id = nodeId(node);
      item.description = `${formatShare(l.share)} · ${formatDuration(l.total_us)} · ${formatOpCount(l.op_count)} · ${l.bound}`;
      item.tooltip = new vscode.MarkdownString(`\`${l.file}:${l.line}\`\n\n${l.top_ops.map((o) => `- ${o.op_type} ×${o.count}: ${formatDuration(o.total_us)} (${o.bound})`).join("\n")}`);
      item.iconPath = new vscode.ThemeIcon("flame");
      item.command = { command: OPEN_LINE_COMMAND, title: "Open line", arguments: [cell ? cell.uri : l.file, l.line] };
      return item;
    }
    const op = node.op;
    const item = new vscode.TreeItem(op.op_type);
    item.id = nodeId(node);
    item.description = `${formatShare(op.share ?? 0)} · ${formatDuration(op.total_us)} · ×${op.count} · ${op.bound}`;
    item.iconPath = new vscode.ThemeIcon("symbol-operator");
    const hottest = entry?.profile.lines.find((l) => l.top_ops.some((o) => o.op_type === op.op_type));
    if (hottest) {
      const cell = entry?.cell && entry.cell.file === hottest.file ? entry.cell : undefined;
      item.command = { command: OPEN_LINE_COMMAND, title: "Open line", arguments: [cell ? cell.uri : hottest.file, hottest.line] };
    }
    return item;
  }

  dispose(): void {
    this.disposed = true;
    for (const sub of this.subs) sub.dispose();
    this.emitter.dispose();
  }
}

/** Opens `file` (a path, or a notebook cell's URI) at 1-based `line`. */
export async function openLine(file: string | vscode.Uri, line: number): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(typeof file === "string" ? vscode.Uri.file(file) : file);
  const pos = new vscode.Position(Math.max(0, Math.min(line - 1, doc.lineCount - 1)), 0);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), preview: false });
}
