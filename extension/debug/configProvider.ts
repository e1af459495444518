// Debug configuration provider for `ascend-npu`: F5 on a Python file without launch.json works,
// and missing fields come from the settings and the interpreter ladder.
import * as vscode from "vscode";
import { resolveInterpreter } from "../common/python";
import { getSettings } from "../common/settings";
import { DEBUG_TYPE, resolveLaunchConfig, type LaunchConfig } from "./launchConfig";

export class AscendConfigurationProvider implements vscode.DebugConfigurationProvider {
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [{ type: DEBUG_TYPE, request: "launch", name: "Ascend NPU: current file", program: "${file}", cwd: "${workspaceFolder}" }];
  }

  async resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    const editor = vscode.window.activeTextEditor;
    const settings = getSettings(folder);
    const python = typeof config.python === "string" && config.python ? config.python : (await resolveInterpreter(settings.interpreter, folder?.uri)).path;
    const result = resolveLaunchConfig(config as Partial<LaunchConfig>, {
      activeFile: editor ? { path: editor.document.uri.fsPath, languageId: editor.document.languageId } : undefined,
      workspaceFolder: folder?.uri.fsPath,
      interpreter: python,
      deviceProfile: settings.deviceProfile,
      deviceCount: settings.deviceCount,
    });
    if ("error" in result) {
      // Returning undefined aborts the launch; VS Code then offers to open launch.json.
      await vscode.window.showErrorMessage(result.error);
      return undefined;
    }
    return result.config;
  }
}
