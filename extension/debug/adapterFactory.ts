// Starts `ascend-lens debug-adapter` (DAP on stdio) with the configuration's interpreter, and routes
// the adapter's custom events (`ascendProfile`, `ascendState`, sent together at every stop and at
// exit) to the profile store and the Devices view.
import * as vscode from "vscode";
import { log } from "../common/log";
import { parseProfile, ProfileFormatError } from "../profile/model";
import type { ProfileStore } from "../profile/store";
import { adapterCommand, DEBUG_TYPE } from "./launchConfig";

export const PROFILE_EVENT = "ascendProfile";
export const STATE_EVENT = "ascendState";

export class AscendAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const python = typeof session.configuration.python === "string" && session.configuration.python ? session.configuration.python : "python3";
    const { command, args } = adapterCommand(python);
    log.info(`Debug adapter: ${command} ${args.join(" ")}`);
    return new vscode.DebugAdapterExecutable(command, args, {
      cwd: typeof session.configuration.cwd === "string" ? session.configuration.cwd : undefined,
      env: { PYTHONUNBUFFERED: "1" },
    });
  }
}

/** Listens to custom events of our debug sessions. */
export function watchDebugEvents(store: ProfileStore, onState: (state: unknown) => void): vscode.Disposable {
  return vscode.debug.onDidReceiveDebugSessionCustomEvent((e) => {
    if (e.session.type !== DEBUG_TYPE) return;
    if (e.event === PROFILE_EVENT) {
      try {
        const profile = parseProfile(e.body);
        store.set({ profile, origin: "debug", label: e.session.name, decorate: true });
      } catch (err) {
        log.warn(`Ignoring an ${PROFILE_EVENT} event: ${err instanceof ProfileFormatError ? err.message : String(err)}`);
      }
    } else if (e.event === STATE_EVENT) {
      onState(e.body);
    }
  });
}
