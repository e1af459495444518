// "Install Jupyter Kernel into the Selected Interpreter": `ascend-lens kernel install`, for people
// who use the Jupyter extension or JupyterLab instead of this extension's controller.
import * as vscode from "vscode";
import { log } from "../common/log";
import { describeFailure, runProcess } from "../common/process";
import type { Settings } from "../common/settingsCore";
import { kernelInstallArgs } from "./cliCommands";

export async function installKernelspec(python: string, settings: Settings): Promise<void> {
  const pick = await vscode.window.showQuickPick(
    [
      { label: "This interpreter's environment", description: "--sys-prefix", detail: python, where: "sys-prefix" as const },
      { label: "For the current user", description: "--user", detail: "~/.local/share/jupyter/kernels", where: "user" as const },
    ],
    { placeHolder: "Install the Ascend NPU (emulated) Jupyter kernel into…" },
  );
  if (!pick) return;
  const args = kernelInstallArgs(pick.where, settings);
  log.info(`Kernelspec: ${python} ${args.join(" ")}`);
  const r = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Ascend Lens: installing the Jupyter kernel" },
    () => runProcess(python, args, { timeoutMs: 60_000 }),
  );
  log.info(r.stdout.trim());
  if (r.code === 0) void vscode.window.showInformationMessage(`Ascend Lens: ${r.stdout.trim() || "kernel installed"}.`);
  else {
    const msg = describeFailure("ascend-lens kernel install", r);
    log.error(msg);
    void vscode.window.showErrorMessage(`Ascend Lens: ${msg}`);
  }
}
