// Applies profile decorations to visible editors: end-of-line text shaded by share, with a hover.
import * as path from "node:path";
import * as vscode from "vscode";
import type { ProfileStore } from "../profile/store";
import { decorationsByFile, SHADE_LEVELS, type LineDecoration } from "./decorationModel";

/** Paths compare by normalised fsPath (case-insensitive where the file system is). */
export function fileKey(file: string): string {
  const p = path.normalize(vscode.Uri.file(file).fsPath);
  return process.platform === "win32" || process.platform === "darwin" ? p.toLowerCase() : p;
}

export class ProfileDecorations implements vscode.Disposable {
  private readonly types: vscode.TextEditorDecorationType[] = [];
  private byFile = new Map<string, LineDecoration[]>();
  private readonly subs: vscode.Disposable[] = [];

  constructor(store: ProfileStore) {
    for (let level = 0; level < SHADE_LEVELS; level++) {
      // Background alpha grows with the share; the text colour stays readable in any theme.
      const alpha = (0.06 + level * 0.07).toFixed(2);
      this.types.push(
        vscode.window.createTextEditorDecorationType({
          isWholeLine: true,
          backgroundColor: `rgba(230, 110, 40, ${alpha})`,
          overviewRulerColor: `rgba(230, 110, 40, ${(0.3 + level * 0.15).toFixed(2)})`,
          overviewRulerLane: vscode.OverviewRulerLane.Right,
          after: { margin: "0 0 0 2em", color: new vscode.ThemeColor("editorCodeLens.foreground"), fontStyle: "italic" },
        }),
      );
    }
    this.subs.push(
      store.onDidChange((entry) => {
        this.byFile = entry?.decorate ? decorationsByFile(entry.profile, fileKey) : new Map<string, LineDecoration[]>();
        this.applyAll();
      }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.applyAll()),
    );
  }

  /** Decorations currently shown for a file (the e2e tests read this through a command). */
  linesFor(file: string): LineDecoration[] {
    return this.byFile.get(fileKey(file)) ?? [];
  }

  get fileCount(): number {
    return this.byFile.size;
  }

  private applyAll(): void {
    for (const editor of vscode.window.visibleTextEditors) this.apply(editor);
  }

  private apply(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== "file") return;
    const lines = this.byFile.get(fileKey(editor.document.uri.fsPath)) ?? [];
    const perLevel: vscode.DecorationOptions[][] = this.types.map(() => []);
    for (const d of lines) {
      if (d.line >= editor.document.lineCount) continue; // the file changed since the run
      const hover = new vscode.MarkdownString(d.hover);
      // The whole line is the range so that hovering the code (not only the after-text) explains it.
      perLevel[d.shade]?.push({
        range: editor.document.lineAt(d.line).range,
        hoverMessage: hover,
        renderOptions: { after: { contentText: `  ${d.text}` } },
      });
    }
    this.types.forEach((t, level) => editor.setDecorations(t, perLevel[level] ?? []));
  }

  dispose(): void {
    for (const d of this.subs) d.dispose();
    for (const d of this.types) d.dispose();
  }
}
