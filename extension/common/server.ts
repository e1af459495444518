import * as vscode from "vscode";
// Builds, starts and restarts the LanguageClient for `ascend-lens server`.
import { LanguageClient, State, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { DISPLAY_NAME, MODULE } from "./constants";
import { log, logChannel } from "./log";
import { NotebookCellDiagnostics } from "./notebookDiagnostics";
import { cliArgs, toServerSettings, type Settings } from "./settingsCore";
import { getPrimarySettings } from "./settings";
import type { StatusBar } from "./statusBar";

/** Files the server lints: Python sources, notebook cells and HCCL rank tables. */
export const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "python" },
  { scheme: "untitled", language: "python" },
  { scheme: "vscode-notebook-cell", language: "python" },
  { scheme: "file", language: "json", pattern: "**/*rank_table*.json" },
];

let trace: vscode.OutputChannel | undefined;
function traceChannel(): vscode.OutputChannel {
  trace ??= vscode.window.createOutputChannel(`${DISPLAY_NAME} LSP Trace`);
  return trace;
}

export function serverEnv(settings: Settings): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONUNBUFFERED: "1", ASCEND_LENS_LOG_LEVEL: settings.logLevel };
}

export async function startServer(interpreter: string, status: StatusBar): Promise<LanguageClient | undefined> {
  const primary = getPrimarySettings();
  const serverOptions: ServerOptions = {
    command: interpreter,
    args: cliArgs("server"),
    options: { cwd: primary.workspace || undefined, env: serverEnv(primary) },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: logChannel(),
    // A plain channel of its own: the LSP trace is too chatty for the log and shows at any log level.
    traceOutputChannel: traceChannel(),
    revealOutputChannelOn: 4, // RevealOutputChannelOn.Never: nothing pops up on its own
    // Cell URIs go out unencoded (`#W0s...==`, not `#W0s...%3D%3D`): pygls keys text documents by a
    // normalised URI but keeps a notebook's cell references as sent, and the two must be equal for
    // the server to find the cells' text.
    uriConverters: {
      code2Protocol: (uri) => (uri.scheme === "vscode-notebook-cell" ? uri.toString(true) : uri.toString()),
      protocol2Code: (value) => vscode.Uri.parse(value),
    },
    // One settings object for the server (it has no per-folder settings); a change restarts it.
    initializationOptions: toServerSettings(primary),
  };
  const client = new LanguageClient(MODULE, DISPLAY_NAME, serverOptions, clientOptions);
  client.onDidChangeState((e) => {
    if (e.newState === State.Running) status.update({ state: "running" });
    else if (e.newState === State.Starting) status.update({ state: "starting" });
    else if (status.state.state !== "failed") status.update({ state: "stopped" });
  });
  status.update({ state: "starting", interpreter });
  log.info(`Starting ${interpreter} ${cliArgs("server").join(" ")}`);
  try {
    await client.start();
    const cells = new NotebookCellDiagnostics(client);
    client.onDidChangeState((e) => e.newState === State.Stopped && cells.dispose());
    return client;
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    log.error(`Language server failed to start: ${msg}`);
    status.update({ state: "failed", detail: msg });
    return undefined;
  }
}

export async function stopServer(client: LanguageClient | undefined): Promise<void> {
  if (!client) return;
  try {
    await client.stop(2000);
  } catch (err) {
    log.warn(`Stopping the language server: ${String(err)}`);
  }
  await client.dispose().catch(() => undefined);
}
