// Reads `ascend-lens.*` per workspace folder and resolves it with settingsCore.
import * as os from "node:os";
import type { ConfigurationChangeEvent, ConfigurationScope, WorkspaceFolder } from "vscode";
import { MODULE } from "./constants";
import { log } from "./log";
import { RESTART_KEYS, resolveSettings, type RawSettings, type Settings } from "./settingsCore";
import { getConfiguration, getWorkspaceFolders } from "./vscodeapi";

const KEYS: (keyof RawSettings)[] = [
  "interpreter",
  "rules.select",
  "rules.ignore",
  "syntaxLevel",
  "device.profile",
  "device.count",
  "logLevel",
];

/** Settings for a folder (or the window when `folder` is undefined). Problems are logged once per read. */
export function getSettings(folder?: WorkspaceFolder, scope?: ConfigurationScope): Settings {
  const config = getConfiguration(MODULE, scope ?? folder?.uri);
  const raw: RawSettings = {};
  for (const key of KEYS) raw[key] = config.get<unknown>(key);
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
