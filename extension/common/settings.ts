// Reads `ascend-lens.*` per workspace folder and resolves it with settingsCore.
import * as os from "node:os";
import type { ConfigurationChangeEvent, ConfigurationScope, WorkspaceFolder } from "vscode";
import { MODULE } from "./constants";
import { log } from "./log";
import { RESOURCE_KEYS, RESTART_KEYS, resolveSettings, WINDOW_KEYS, type RawSettings, type Settings } from "./settingsCore";
import { getConfiguration, getWorkspaceFolders } from "./vscodeapi";

/** Settings for a folder (or the window when `folder` is undefined). Problems are logged once per read. */
export function getSettings(folder?: WorkspaceFolder, scope?: ConfigurationScope): Settings {
  const perResource = getConfiguration(MODULE, scope ?? folder?.uri ?? null);
  const perWindow = getConfiguration(MODULE);
  const raw: RawSettings = {};
  for (const key of RESOURCE_KEYS) raw[key] = perResource.get<unknown>(key);
  for (const key of WINDOW_KEYS) raw[key] = perWindow.get<unknown>(key);
  const { settings, warnings } = resolveSettings(raw, {
    workspaceFolder: folder?.uri.fsPath,
    userHome: os.homedir(),
    cwd: process.cwd(),
    env: process.env,
  });
  for (const w of warnings) log.warn(w);
  return settings;
}

/** The settings of the first folder, or the window's: used for run, debug defaults and status. */
export function getPrimarySettings(): Settings {
  return getSettings(getWorkspaceFolders()[0]);
}

export function affectsServer(e: ConfigurationChangeEvent): boolean {
  return RESTART_KEYS.some((k) => e.affectsConfiguration(`${MODULE}.${k}`));
}
