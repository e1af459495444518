// First run: the interpreter lacks the `ascend-lens` package. Offer to install the wheel shipped in
// the .vsix into it, or into a managed venv in the extension's storage, with progress.
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { BUNDLED_WHEEL_DIR, MODULE, PY_DISTRIBUTION } from "./constants";
import { log } from "./log";
import { bundledWheel, venvPython } from "./installCore";
import { describeFailure, PROBE_PACKAGE, runProcess } from "./process";

export type PackageCheck = { installed: true; version: string } | { installed: false; reason: string };

export async function checkPackage(interpreter: string): Promise<PackageCheck> {
  const r = await runProcess(interpreter, ["-c", PROBE_PACKAGE], { timeoutMs: 30_000 });
  if (r.code === 0) return { installed: true, version: r.stdout.trim() };
  return { installed: false, reason: r.code === 3 ? `${PY_DISTRIBUTION} is not installed in ${interpreter}` : describeFailure(interpreter, r) };
}

async function step(
  progress: vscode.Progress<{ message?: string }>,
  token: vscode.CancellationToken,
  message: string,
  command: string,
  args: string[],
): Promise<void> {
  progress.report({ message });
  log.info(`${message}: ${command} ${args.join(" ")}`);
  const abort = new AbortController();
  const sub = token.onCancellationRequested(() => abort.abort());
  try {
    const r = await runProcess(command, args, { timeoutMs: 15 * 60_000, onOutput: log.raw, signal: abort.signal });
    if (token.isCancellationRequested) throw new Error("cancelled");
    if (r.code !== 0) throw new Error(describeFailure(command, r));
  } finally {
    sub.dispose();
  }
}

/**
 * Installs the bundled wheel. Returns the interpreter that now has the package (the managed venv's
 * when that was chosen), or undefined when the user declined or it failed (already reported).
 */
export async function offerInstall(interpreter: string, storage: vscode.Uri, reason: string): Promise<string | undefined> {
  const wheel = bundledWheel(BUNDLED_WHEEL_DIR);
  if (!wheel) {
    const msg = `Ascend Lens: ${reason}. Install it with \`pip install ascend-lens\` (or build the .vsix with scripts/package-extension, which bundles the wheel).`;
    log.warn(msg);
    void vscode.window.showWarningMessage(msg, "Show Logs").then((a) => a && vscode.commands.executeCommand(`${MODULE}.showLogs`));
    return undefined;
  }
  const INTO = "Install into this interpreter";
  const VENV = "Create a managed environment";
  const choice = await vscode.window.showWarningMessage(
    `Ascend Lens needs its Python package (${path.basename(wheel)}) in ${interpreter}.`,
    { modal: false, detail: reason },
    INTO,
    VENV,
  );
  if (!choice) return undefined;
  const venv = path.join(storage.fsPath, "venv");
  const target = choice === INTO ? interpreter : venvPython(venv, process.platform);
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Ascend Lens", cancellable: true },
      async (progress, token) => {
        if (choice === VENV) {
          await fs.promises.mkdir(storage.fsPath, { recursive: true });
          await step(progress, token, "Creating the environment", interpreter, ["-m", "venv", venv]);
        }
        await step(progress, token, `Installing ${path.basename(wheel)}`, target, [
          "-m", "pip", "install", "--disable-pip-version-check", "--upgrade", wheel,
        ]);
      },
    );
  } catch (err) {
    const msg = `Ascend Lens: installing the Python package failed: ${err instanceof Error ? err.message : String(err)}`;
    log.error(msg);
    void vscode.window.showErrorMessage(msg, "Show Logs").then((a) => a && vscode.commands.executeCommand(`${MODULE}.showLogs`));
    return undefined;
  }
  if (choice === VENV) {
    await vscode.workspace.getConfiguration(MODULE).update("interpreter", target, vscode.ConfigurationTarget.Global);
  }
  void vscode.window.showInformationMessage(`Ascend Lens: installed into ${target}.`);
  return target;
}
