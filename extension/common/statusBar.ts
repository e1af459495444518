// The status bar item: device profile and server state; clicking it offers the common actions.
import * as vscode from "vscode";
import { MODULE } from "./constants";
import { statusView, type StatusInput } from "./statusModel";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(`${MODULE}.status`, vscode.StatusBarAlignment.Left, 50);
  private input: StatusInput;

  constructor(initial: StatusInput) {
    this.input = initial;
    this.item.name = "Ascend Lens";
    this.item.command = `${MODULE}.statusActions`;
    this.render();
    this.item.show();
  }

  update(patch: Partial<StatusInput>): void {
    this.input = { ...this.input, ...patch };
    if (!("detail" in patch) && patch.state !== undefined) delete this.input.detail;
    this.render();
  }

  get state(): StatusInput {
    return this.input;
  }

  private render(): void {
    const v = statusView(this.input);
    this.item.text = v.text;
    this.item.tooltip = v.tooltip;
    this.item.backgroundColor =
      v.severity === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : v.severity === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}

/** The quick pick behind the status bar item. */
export async function showStatusActions(): Promise<void> {
  const actions: { label: string; command: string }[] = [
    { label: "$(debug-restart) Restart language server", command: `${MODULE}.restart` },
    { label: "$(output) Show logs", command: `${MODULE}.showLogs` },
    { label: "$(run) Run current file with profile", command: `${MODULE}.runWithProfile` },
    { label: "$(package) Install the Python package", command: `${MODULE}.installPackage` },
    { label: "$(settings-gear) Settings", command: "workbench.action.openSettings" },
  ];
  const pick = await vscode.window.showQuickPick(actions, { placeHolder: "Ascend Lens" });
  if (!pick) return;
  if (pick.command === "workbench.action.openSettings") await vscode.commands.executeCommand(pick.command, `@ext:ascend-lens.ascend-lens`);
  else await vscode.commands.executeCommand(pick.command);
}
