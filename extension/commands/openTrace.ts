// "Open Trace": the Chrome-trace JSON of the last profile (Perfetto / chrome://tracing read it).
import * as fs from "node:fs";
import * as vscode from "vscode";
import type { ProfileStore } from "../profile/store";

export async function openTrace(store: ProfileStore): Promise<void> {
  const trace = store.current?.profile.trace;
  if (!trace) {
    void vscode.window.showInformationMessage("Ascend Lens: the last profile has no trace. Run a file with profile first.");
    return;
  }
  if (!fs.existsSync(trace)) {
    void vscode.window.showErrorMessage(`Ascend Lens: the trace file is gone: ${trace}`);
    return;
  }
  await vscode.window.showTextDocument(vscode.Uri.file(trace), { preview: false });
  const REVEAL = "Reveal in File Explorer";
  const pick = await vscode.window.showInformationMessage(
    "Chrome trace JSON: open it in Perfetto (ui.perfetto.dev) or chrome://tracing for the timeline.",
    REVEAL,
  );
  if (pick === REVEAL) await vscode.commands.executeCommand("revealFileInOS", vscode.Uri.file(trace));
}
