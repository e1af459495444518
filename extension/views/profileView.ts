// The Profile view: hot lines and top ops of the last run, debug session or cell. Selecting a line
// opens it; selecting an op opens the hottest line that launched it.
import * as path from "node:path";
import * as vscode from "vscode";
import { MODULE } from "../common/constants";
import { formatDuration, formatOpCount, formatShare } from "../profile/format";
import type { ProfileStore } from "../profile/store";
import { GROUPS, nodeId, refreshTarget, shouldFire, type ProfileNode as Node } from "./profileTree";

export const OPEN_LINE_COMMAND = `${MODULE}.profile.openLine`;
const REFRESH_DELAY_MS = 150;

export class ProfileView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | Node[] | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subs: vscode.Disposable[] = [];
  /** Whether the root has shown the two groups; from then on they stay (see profileTree). */
  private groupsShown = false;
  private visible = false;
  private stale = false;
  private disposed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly store: ProfileStore) {
    this.subs.push(store.onDidChange(() => this.changed()));
  }

  /** Creates the view for `viewId`; refreshes are sent only while it is visible. */
  createView(viewId: string): vscode.TreeView<Node> {
    const view = vscode.window.createTreeView(viewId, { treeDataProvider: this });
    this.visible = view.visible;
    // The view itself is not disposed here: deactivation happens when the extension host
    // terminates, and disposing a tree view then cancels VS Code's refresh in flight and
    // drops the handles the workbench is still asking about ("Unable to refresh tree view:
    // Canceled", "No tree item with id '1/group:ops'" in the e2e logs). It ends with the host.
    this.subs.push(
      view.onDidChangeVisibility((e) => {
        this.visible = e.visible;
        if (this.stale && shouldFire(this.disposed, this.visible)) {
          this.stale = false;
          this.emitter.fire(this.groupsShown ? [...GROUPS] : undefined);
        }
      }),
    );
    return view;
  }

  /** Store changes are coalesced: a debug session sends a profile at every stop, and a refresh
   * still in flight when the extension host terminates is logged as an error by VS Code. */
  private changed(): void {
    if (this.disposed || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh();
    }, REFRESH_DELAY_MS);
  }

  private refresh(): void {
    const target = refreshTarget(this.groupsShown, this.store.current !== undefined);
    if (target === "none" || this.disposed) return;
    if (!shouldFire(this.disposed, this.visible)) {
      this.stale = true;
      return;
    }
    this.emitter.fire(target === "root" ? undefined : [...GROUPS]);
  }

  getChildren(node?: Node): Node[] {
    const entry = this.store.current;
    if (!node) {
      if (!entry && !this.groupsShown) return []; // the welcome text until the first profile
      this.groupsShown = true;
      return [...GROUPS];
    }
    if (!entry || node.kind !== "group") return [];
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
      if (lines) {
        item.description = entry
          ? `${entry.label} · ${entry.profile.device} · ${formatDuration(entry.profile.total_us)}`
          : "cleared";
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
    clearTimeout(this.timer);
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
