// "Run Current File on Emulated NPU with Profile": `ascend-lens run --profile DIR FILE` as a task
// (output in the terminal), then the per-line profile goes to the store (decorations + Profile view).
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { MODULE, VIEW_PROFILE } from "../common/constants";
import { log } from "../common/log";
import type { Settings } from "../common/settingsCore";
import { runArgs } from "./cliCommands";
import { parseProfileText, type Profile } from "../profile/model";
import type { ProfileStore } from "../profile/store";

function runTask(python: string, args: string[], cwd: string, label: string): Promise<number | undefined> {
  const task = new vscode.Task(
    { type: MODULE, task: "run" },
    vscode.TaskScope.Workspace,
    `run ${label}`,
    "Ascend Lens",
    new vscode.ProcessExecution(python, args, { cwd }),
  );
  task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, clear: true, panel: vscode.TaskPanelKind.Dedicated };
  return new Promise((resolve, reject) => {
    let execution: vscode.TaskExecution | undefined;
    const sub = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution !== execution) return;
      sub.dispose();
      resolve(e.exitCode);
    });
    vscode.tasks.executeTask(task).then(
      (ex) => (execution = ex),
      (err: unknown) => {
        sub.dispose();
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

export async function runWithProfile(
  uri: vscode.Uri | undefined,
  ctx: { python: () => Promise<string>; settings: () => Settings; storage: vscode.Uri; store: ProfileStore },
): Promise<Profile | undefined> {
  const doc = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
  if (!doc || doc.languageId !== "python" || doc.uri.scheme !== "file") {
    void vscode.window.showErrorMessage("Ascend Lens: open a saved Python file to run it on the emulated NPU.");
    return undefined;
  }
  if (doc.isDirty) await doc.save();
  const file = doc.uri.fsPath;
  const dir = path.join(ctx.storage.fsPath, "profiles", path.basename(file, ".py"));
  await fs.promises.rm(dir, { recursive: true, force: true });
  await fs.promises.mkdir(dir, { recursive: true });
  const python = await ctx.python();
  const args = runArgs(ctx.settings(), dir, file);
  const cwd = vscode.workspace.getWorkspaceFolder(doc.uri)?.uri.fsPath ?? path.dirname(file);
  log.info(`Run: ${python} ${args.join(" ")}`);
  const code = await runTask(python, args, cwd, path.basename(file));
  const linesPath = path.join(dir, "lines.json");
  let profile: Profile;
  try {
    profile = parseProfileText(await fs.promises.readFile(linesPath, "utf8"));
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? `no profile was written (exit code ${code ?? "?"})` : String((err as Error).message);
    void vscode.window.showErrorMessage(`Ascend Lens: ${path.basename(file)}: ${why}. See the terminal for the script's output.`);
    return undefined;
  }
  ctx.store.set({ profile, origin: "run", label: path.basename(file), decorate: true });
  await vscode.commands.executeCommand(`${VIEW_PROFILE}.focus`);
  if (code !== 0) void vscode.window.showWarningMessage(`Ascend Lens: ${path.basename(file)} exited with code ${code ?? "?"}; the profile covers the work done before that.`);
  return profile;
}
