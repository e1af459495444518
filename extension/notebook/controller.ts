// NotebookController "Ascend NPU (emulated)" for .ipynb: one `ascend-lens kernel bridge` per notebook,
// cells executed in order, outputs as MIME bundles, interrupt and restart.
import * as path from "node:path";
import * as vscode from "vscode";
import { MODULE } from "../common/constants";
import { log } from "../common/log";
import { describeFailure, runProcess } from "../common/process";
import { cliArgs, type Settings } from "../common/settingsCore";
import { kernelInstallArgs } from "../commands/cliCommands";
import { parseProfile, PROFILE_MIME } from "../profile/model";
import type { ProfileStore } from "../profile/store";
import { BridgeClient } from "./bridgeClient";
import type { CellOutput, Notice } from "./bridgeProtocol";
import { cellFileOf } from "./rendererView";

export const CONTROLLER_ID = `${MODULE}.npu`;
export const CONTROLLER_LABEL = "Ascend NPU (emulated)";
/** The kernelspec `ascend-lens kernel install` writes and the bridge starts. */
const KERNELSPEC_NAME = "ascend-npu";

/** `metadata.kernelspec.name` of an .ipynb, wherever the serializer put nbformat's metadata. */
function kernelspecName(metadata: Record<string, unknown>): string | undefined {
  const inner = metadata.metadata;
  const md = (typeof inner === "object" && inner !== null ? inner : metadata) as { kernelspec?: { name?: unknown } };
  return typeof md.kernelspec?.name === "string" ? md.kernelspec.name : undefined;
}

/** Converts one bridge output to a VS Code output item list; JSON MIME types stay objects. */
export function toOutputItems(data: Record<string, unknown>): vscode.NotebookCellOutputItem[] {
  const items: vscode.NotebookCellOutputItem[] = [];
  for (const [mime, value] of Object.entries(data)) {
    if (mime === "application/json" || mime.endsWith("+json")) items.push(vscode.NotebookCellOutputItem.json(value, mime));
    else if (typeof value === "string") {
      // Images travel base64-encoded in Jupyter bundles (except SVG, which is text).
      if (mime.startsWith("image/") && mime !== "image/svg+xml") items.push(new vscode.NotebookCellOutputItem(Buffer.from(value, "base64"), mime));
      else items.push(vscode.NotebookCellOutputItem.text(value, mime));
    } else items.push(vscode.NotebookCellOutputItem.json(value, mime));
  }
  // VS Code picks the first renderable item; put our richest type first.
  items.sort((a, b) => rank(a.mime) - rank(b.mime));
  return items;
}

function rank(mime: string): number {
  if (mime === PROFILE_MIME) return 0;
  if (mime === "text/plain") return 3;
  return mime.startsWith("text/html") || mime.startsWith("image/") ? 1 : 2;
}

export class NpuNotebookController implements vscode.Disposable {
  private readonly controller: vscode.NotebookController;
  private readonly bridges = new Map<string, BridgeClient>();
  private readonly subs: vscode.Disposable[] = [];
  private executionOrder = 0;

  constructor(
    private readonly interpreter: () => Promise<string>,
    private readonly store: ProfileStore,
    private readonly onState: (state: unknown) => void,
    private readonly settings: () => Settings,
  ) {
    this.controller = vscode.notebooks.createNotebookController(CONTROLLER_ID, "jupyter-notebook", CONTROLLER_LABEL);
    this.controller.supportedLanguages = ["python"];
    this.controller.supportsExecutionOrder = true;
    this.controller.description = "Runs cells on the Ascend Lens emulated runtime";
    this.controller.executeHandler = (cells, notebook) => this.executeAll(cells, notebook);
    this.controller.interruptHandler = (notebook) => this.interrupt(notebook);
    this.subs.push(
      vscode.workspace.onDidCloseNotebookDocument((nb) => void this.shutdown(nb)),
      vscode.workspace.onDidOpenNotebookDocument((nb) => this.setAffinity(nb)),
    );
    vscode.workspace.notebookDocuments.forEach((nb) => this.setAffinity(nb));
  }

  /**
   * Preferred for notebooks saved with the `ascend-npu` kernelspec, and for every notebook when the
   * Jupyter extension is absent (then this is the only kernel and no picker needs to appear).
   */
  private setAffinity(nb: vscode.NotebookDocument): void {
    if (nb.notebookType !== "jupyter-notebook") return;
    const jupyter = vscode.extensions.getExtension("ms-toolsai.jupyter") !== undefined;
    if (!jupyter || kernelspecName(nb.metadata) === KERNELSPEC_NAME) {
      this.controller.updateNotebookAffinity(nb, vscode.NotebookControllerAffinity.Preferred);
    }
  }

  private key(nb: vscode.NotebookDocument): string {
    return nb.uri.toString();
  }

  private async bridgeFor(nb: vscode.NotebookDocument): Promise<BridgeClient> {
    const existing = this.bridges.get(this.key(nb));
    if (existing?.running) return existing;
    const python = await this.interpreter();
    let bridge = this.spawnBridge(nb, python);
    try {
      await bridge.waitReady();
    } catch (err) {
      // The bridge starts the `ascend-npu` kernelspec; install it once into this interpreter's
      // environment (or the user's) when it is missing, then try again.
      if (!(err instanceof Error) || !/no such kernel/i.test(err.message)) throw err;
      log.info(`Kernelspec missing for ${python}; installing it`);
      const s = this.settings();
      let r = await runProcess(python, kernelInstallArgs("sys-prefix", s), { timeoutMs: 60_000 });
      if (r.code !== 0) r = await runProcess(python, kernelInstallArgs("user", s), { timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`${err.message}; installing the kernelspec failed: ${describeFailure("ascend-lens kernel install", r)}`);
      bridge = this.spawnBridge(nb, python);
    }
    return bridge;
  }

  private spawnBridge(nb: vscode.NotebookDocument, python: string): BridgeClient {
    const cwd = nb.uri.scheme === "file" ? path.dirname(nb.uri.fsPath) : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const args = cliArgs("kernel", "bridge", ...(cwd ? ["--cwd", cwd] : []));
    log.info(`Notebook bridge: ${python} ${args.join(" ")}`);
    const bridge = new BridgeClient({
      command: python,
      args,
      cwd,
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
      onNotice: (n) => this.notice(n, nb),
      onLog: (line) => log.info(`[bridge] ${line}`),
      onExit: (reason) => log.info(`Notebook bridge for ${path.basename(nb.uri.path)}: ${reason}`),
    });
    this.bridges.set(this.key(nb), bridge);
    return bridge;
  }

  private notice(n: Notice, nb: vscode.NotebookDocument): void {
    if (n.kind === "state") this.onState(n.state);
    else if (n.kind === "died") {
      log.warn(`The notebook kernel died (exit code ${n.exitCode ?? "?"}); the next cell starts a new one.`);
      void this.shutdown(nb);
    }
    else if (n.kind === "failure") log.error(`Notebook bridge: ${n.message}`);
  }

  private async executeAll(cells: vscode.NotebookCell[], nb: vscode.NotebookDocument): Promise<void> {
    for (const cell of cells) {
      const ok = await this.executeCell(cell, nb);
      if (!ok) break; // like Jupyter: a failing cell stops the rest of "run all"
    }
  }

  private async executeCell(cell: vscode.NotebookCell, nb: vscode.NotebookDocument): Promise<boolean> {
    const exec = this.controller.createNotebookCellExecution(cell);
    exec.executionOrder = ++this.executionOrder;
    exec.start(Date.now());
    await exec.clearOutput();
    let cancelled = false;
    exec.token.onCancellationRequested(() => {
      cancelled = true;
      void this.interrupt(nb);
    });
    // Outputs are appended in order; a "clear" with wait=true is deferred to the next output.
    let clearPending = false;
    const queue: Promise<void>[] = [];
    const emit = (o: CellOutput): void => {
      queue.push(this.applyOutput(exec, cell, o, clearPending).then((cleared) => void (clearPending = cleared)));
    };
    try {
      const bridge = await this.bridgeFor(nb);
      const reply = await bridge.execute(cell.document.getText(), { output: emit });
      await Promise.all(queue);
      if (reply.executionCount !== undefined) exec.executionOrder = reply.executionCount;
      const ok = reply.status === "ok" && !cancelled;
      exec.end(ok, Date.now());
      return ok;
    } catch (err) {
      await Promise.all(queue);
      const msg = err instanceof Error ? err.message : String(err);
      await exec.appendOutput(new vscode.NotebookCellOutput([vscode.NotebookCellOutputItem.error({ name: "Ascend Lens", message: msg })]));
      exec.end(false, Date.now());
      return false;
    }
  }

  /** Returns whether a deferred clear is still pending after this output. */
  private async applyOutput(exec: vscode.NotebookCellExecution, cell: vscode.NotebookCell, o: CellOutput, clearPending: boolean): Promise<boolean> {
    if (o.kind === "clear") {
      if (o.wait) return true;
      await exec.clearOutput();
      return false;
    }
    if (clearPending) await exec.clearOutput();
    if (o.kind === "stream") {
      const item = o.name === "stderr" ? vscode.NotebookCellOutputItem.stderr(o.text) : vscode.NotebookCellOutputItem.stdout(o.text);
      await exec.appendOutput(new vscode.NotebookCellOutput([item]));
    } else if (o.kind === "error") {
      const err = new Error(o.evalue);
      err.name = o.ename;
      err.stack = o.traceback.join("\n");
      await exec.appendOutput(new vscode.NotebookCellOutput([vscode.NotebookCellOutputItem.error(err)]));
    } else {
      await exec.appendOutput(new vscode.NotebookCellOutput(toOutputItems(o.data), o.metadata));
      const profile = o.data[PROFILE_MIME];
      if (profile !== undefined) {
        try {
          const cellFile = cellFileOf(o.metadata);
          this.store.set({
            profile: parseProfile(profile),
            origin: "notebook",
            label: `${path.basename(cell.notebook.uri.path)} cell ${cell.index + 1}`,
            decorate: false,
            ...(cellFile ? { cell: { file: cellFile, uri: cell.document.uri, index: cell.index } } : {}),
          });
        } catch (err) {
          log.warn(`Profile output of cell ${cell.index + 1} is not valid: ${String(err)}`);
        }
      }
    }
    return false;
  }

  /** Asks every running kernel for its device state (answered by a `state` event). */
  async requestState(): Promise<boolean> {
    const running = [...this.bridges.values()].filter((b) => b.running);
    await Promise.all(running.map((b) => b.requestState().catch(() => undefined)));
    return running.length > 0;
  }

  async interrupt(nb: vscode.NotebookDocument): Promise<void> {
    const bridge = this.bridges.get(this.key(nb));
    if (!bridge?.running) return;
    const reply = await bridge.interrupt().catch((e: Error) => ({ status: "error" as const, message: e.message }));
    if (reply.status !== "ok") log.warn(`Interrupt failed: ${reply.message ?? reply.status}`);
  }

  /** Restarts the kernel of the active notebook (command `ascend-lens.notebook.restart`). */
  async restart(nb: vscode.NotebookDocument): Promise<void> {
    const bridge = this.bridges.get(this.key(nb));
    this.executionOrder = 0;
    if (!bridge?.running) return;
    const reply = await bridge.restart().catch((e: Error) => ({ status: "error" as const, message: e.message }));
    if (reply.status !== "ok") {
      log.warn(`Restart failed (${reply.message ?? reply.status}); starting a new bridge`);
      await this.shutdown(nb);
    }
  }

  private async shutdown(nb: vscode.NotebookDocument): Promise<void> {
    const bridge = this.bridges.get(this.key(nb));
    this.bridges.delete(this.key(nb));
    await bridge?.dispose();
  }

  dispose(): void {
    for (const b of this.bridges.values()) void b.dispose();
    this.bridges.clear();
    for (const d of this.subs) d.dispose();
    this.controller.dispose();
  }
}
