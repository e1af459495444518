// Pulls diagnostics for notebook cells. vscode-languageclient 9 pulls (`textDocument/diagnostic`)
// only after a text document's didOpen, and cells synced through notebook sync never get one,
// so without this a pull-mode server's results for cells would never be asked for.
import * as vscode from "vscode";
import { DocumentDiagnosticRequest, type LanguageClient } from "vscode-languageclient/node";
import { log } from "./log";

const CELL_SCHEME = "vscode-notebook-cell";
const DEBOUNCE_MS = 300;

export class NotebookCellDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection("ascend-lens-notebooks");
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly client: LanguageClient) {
    this.subs.push(
      this.collection,
      vscode.workspace.onDidOpenNotebookDocument((nb) => this.schedule(nb)),
      vscode.workspace.onDidChangeNotebookDocument((e) => this.schedule(e.notebook)),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document.uri.scheme !== CELL_SCHEME) return;
        const nb = vscode.workspace.notebookDocuments.find((n) => n.getCells().some((c) => c.document === e.document));
        if (nb) this.schedule(nb);
      }),
      vscode.workspace.onDidCloseNotebookDocument((nb) => {
        for (const cell of nb.getCells()) this.collection.delete(cell.document.uri);
      }),
    );
    for (const nb of vscode.workspace.notebookDocuments) this.schedule(nb);
  }

  private schedule(nb: vscode.NotebookDocument): void {
    const key = nb.uri.toString();
    clearTimeout(this.timers.get(key));
    // After the client's own notebook didOpen/didChange has gone out.
    this.timers.set(key, setTimeout(() => void this.pull(nb), DEBOUNCE_MS));
  }

  private async pull(nb: vscode.NotebookDocument): Promise<void> {
    if (!this.client.initializeResult?.capabilities.diagnosticProvider || nb.isClosed) return;
    for (const cell of nb.getCells()) {
      if (cell.kind !== vscode.NotebookCellKind.Code || cell.document.languageId !== "python") continue;
      const uri = cell.document.uri;
      try {
        const report = await this.client.sendRequest(DocumentDiagnosticRequest.type, {
          textDocument: { uri: this.client.code2ProtocolConverter.asUri(uri) },
        });
        if (report.kind === "full") {
          this.collection.set(uri, await this.client.protocol2CodeConverter.asDiagnostics(report.items));
        }
      } catch (err) {
        log.debug(`Pulling diagnostics for ${uri.toString()}: ${String(err)}`);
      }
    }
  }

  dispose(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    for (const d of this.subs) d.dispose();
  }
}
