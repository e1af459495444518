// Wiring only: create the parts, register them, start the language server. Logic lives in the
// modules imported here.
import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { openTrace } from "./commands/openTrace";
import { installKernelspec } from "./commands/kernelspec";
import { RULE_DOC_SCHEME, RuleDocProvider, showRuleDocumentation } from "./commands/ruleDocs";
import { runWithProfile } from "./commands/runProfile";
import { MODULE, RESTART_DELAY_MS, VIEW_DEVICES, VIEW_PROBLEMS, VIEW_PROFILE } from "./common/constants";
import { checkPackage, offerInstall } from "./common/install";
import { log, logChannel } from "./common/log";
import { onInterpreterChanged, resolveInterpreter } from "./common/python";
import { Restarter } from "./common/restarter";
import { startServer, stopServer } from "./common/server";
import { affectsServer, getPrimarySettings } from "./common/settings";
import { showStatusActions, StatusBar } from "./common/statusBar";
import { AscendAdapterFactory, watchDebugEvents } from "./debug/adapterFactory";
import { AscendConfigurationProvider } from "./debug/configProvider";
import type { LineDecoration } from "./debug/decorationModel";
import { ProfileDecorations } from "./debug/decorations";
import { DEBUG_TYPE } from "./debug/launchConfig";
import { NpuNotebookController } from "./notebook/controller";
import type { ProfileStore as Store } from "./profile/store";
import { ProfileStore } from "./profile/store";
import { DevicesView } from "./views/devicesView";
import type { DevicesSnapshot } from "./views/devicesModel";
import { openLine, ProfileView } from "./views/profileView";
import { ProblemsByRuleView, ruleCodeOfNode } from "./views/problemsView";
import type { RuleCount } from "./views/problemsModel";

/** What `extensions.getExtension("ascend-lens.ascend-lens").exports` gives (used by the e2e tests). */
export interface AscendLensApi {
  profiles: Store;
  decorationsFor(file: string): LineDecoration[];
  problemCounts(): RuleCount[];
  devices(): DevicesSnapshot;
  serverState(): string;
  /** Resolves once the first server start attempt has finished. */
  ready: Promise<void>;
}

let client: LanguageClient | undefined;

export function activate(context: vscode.ExtensionContext): AscendLensApi {
  const subs = context.subscriptions;
  const settings = getPrimarySettings();
  const folderUri = (): vscode.Uri | undefined => vscode.workspace.workspaceFolders?.[0]?.uri;
  const python = async (): Promise<string> => (await resolveInterpreter(getPrimarySettings().interpreter, folderUri())).path;
  const storage = context.storageUri ?? context.globalStorageUri;

  const status = new StatusBar({ state: "starting", deviceProfile: settings.deviceProfile, deviceCount: settings.deviceCount, interpreter: "…" });
  const store = new ProfileStore();
  const decorations = new ProfileDecorations(store);
  const devices = new DevicesView(() => {
    const s = getPrimarySettings();
    return { profile: s.deviceProfile, count: s.deviceCount };
  });
  const profileView = new ProfileView(store);
  const problems = new ProblemsByRuleView();
  // The Profile view goes before the store: disposed first, it sends nothing while the rest stops.
  subs.push(logChannel(), status, profileView, store, decorations, devices, problems);
  profileView.createView(VIEW_PROFILE);
  subs.push(
    vscode.window.registerTreeDataProvider(VIEW_DEVICES, devices),
    vscode.window.registerTreeDataProvider(VIEW_PROBLEMS, problems),
  );

  // Language server: started now, restarted on settings/interpreter changes and by command.
  let offeredInstall = false;
  const restarter = new Restarter(async () => {
    await stopServer(client);
    client = undefined;
    const py = await python();
    status.update({ interpreter: py });
    const check = await checkPackage(py);
    if (!check.installed) {
      log.warn(check.reason);
      status.update({ state: "missing-package", detail: check.reason });
      if (offeredInstall || !vscode.workspace.isTrusted) return;
      offeredInstall = true;
      const target = await offerInstall(py, context.globalStorageUri, check.reason);
      // A managed venv changes the interpreter setting, which schedules its own restart.
      if (target === py) restarter.schedule(0);
      return;
    }
    log.info(`ascend-lens ${check.version} in ${py}`);
    client = await startServer(py, status);
  });
  subs.push(restarter);
  subs.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsServer(e)) restarter.schedule(RESTART_DELAY_MS);
      if (e.affectsConfiguration(`${MODULE}.device`)) {
        const s = getPrimarySettings();
        status.update({ deviceProfile: s.deviceProfile, deviceCount: s.deviceCount });
        if (devices.current.origin === "settings") devices.reset();
      }
    }),
  );
  void onInterpreterChanged(() => {
    if (!getPrimarySettings().interpreter) restarter.schedule(RESTART_DELAY_MS);
  }).then((d) => subs.push(d));

  // Notebooks.
  const controller = new NpuNotebookController(python, store, (state) => devices.update(state, "kernel"), getPrimarySettings);
  subs.push(controller);

  const command = (id: string, fn: (...args: never[]) => unknown): void => {
    subs.push(vscode.commands.registerCommand(`${MODULE}.${id}`, fn as (...args: unknown[]) => unknown));
  };
  command("restart", () => restarter.now());
  command("showLogs", () => logChannel().show());
  command("statusActions", () => showStatusActions());
  command("installPackage", async () => {
    const py = await python();
    const check = await checkPackage(py);
    const target = await offerInstall(py, context.globalStorageUri, check.installed ? `version ${check.version} is installed; reinstall the bundled one` : check.reason);
    if (target === py) await restarter.now();
  });
  command("runWithProfile", (uri?: vscode.Uri) =>
    runWithProfile(uri instanceof vscode.Uri ? uri : undefined, { python, settings: getPrimarySettings, storage, store }),
  );
  command("openTrace", () => openTrace(store));
  command("clearProfileDecorations", () => store.clear());
  // From the palette (no argument), a caller (a code) or the Problems by Rule view (its tree node).
  command("showRuleDocumentation", (arg?: unknown) =>
    showRuleDocumentation(python, typeof arg === "string" ? arg : ruleCodeOfNode(arg)),
  );
  command("installKernelspec", async () => installKernelspec(await python(), getPrimarySettings()));
  command("devices.refresh", async () => {
    // A running notebook kernel answers with a state event; otherwise show the configured devices.
    if (!(await controller.requestState())) devices.reset();
  });
  command("notebook.restart", async () => {
    const nb = vscode.window.activeNotebookEditor?.notebook;
    if (nb) await controller.restart(nb);
  });
  command("problems.filter", (arg?: unknown) => {
    const code = typeof arg === "string" ? arg : ruleCodeOfNode(arg);
    problems.setFilter(code === problems.activeFilter ? undefined : code);
  });
  command("problems.clearFilter", () => problems.setFilter(undefined));
  command("profile.openLine", (file: string | vscode.Uri, line: number) => openLine(file, line));
  subs.push(vscode.workspace.registerTextDocumentContentProvider(RULE_DOC_SCHEME, new RuleDocProvider(python)));

  // Debugging.
  subs.push(
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new AscendConfigurationProvider()),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new AscendConfigurationProvider(), vscode.DebugConfigurationProviderTriggerKind.Dynamic),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new AscendAdapterFactory()),
    watchDebugEvents(store, (state) => devices.update(state, "debug")),
  );

  const ready = restarter.now().catch((err: unknown) => log.error(`Starting the language server: ${String(err)}`));
  return {
    profiles: store,
    decorationsFor: (file) => decorations.linesFor(file),
    problemCounts: () => problems.counts,
    devices: () => devices.current,
    serverState: () => status.state.state,
    ready,
  };
}

export async function deactivate(): Promise<void> {
  await stopServer(client);
  client = undefined;
}
