// One-line wrappers over the `vscode` API that the logic uses, so it can be replaced in tests.
import * as vscode from "vscode";

export function createLogChannel(name: string): vscode.LogOutputChannel {
  return vscode.window.createOutputChannel(name, { log: true });
}

/** `scope` null: the value for any resource (what VS Code asks for resource-scoped settings read
 * without a folder); undefined: the window's. */
export function getConfiguration(section: string, scope?: vscode.ConfigurationScope | null): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(section, scope);
}

export function getWorkspaceFolders(): readonly vscode.WorkspaceFolder[] {
  return vscode.workspace.workspaceFolders ?? [];
}

export function getWorkspaceFolder(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.getWorkspaceFolder(uri);
}

export function registerCommand(command: string, callback: (...args: never[]) => unknown): vscode.Disposable {
  return vscode.commands.registerCommand(command, callback as (...args: unknown[]) => unknown);
}

export function executeCommand<T = unknown>(command: string, ...rest: unknown[]): Thenable<T> {
  return vscode.commands.executeCommand<T>(command, ...rest);
}

export function activeTextEditor(): vscode.TextEditor | undefined {
  return vscode.window.activeTextEditor;
}

export function isTrusted(): boolean {
  return vscode.workspace.isTrusted;
}
