// Debug configuration resolution for type `ascend-npu`, without VS Code: F5 with no launch.json,
// defaults from settings, and the adapter's command line. Pure.
import { cliArgs } from "../common/settingsCore";

export const DEBUG_TYPE = "ascend-npu";

export interface LaunchConfig {
  type: string;
  request: string;
  name: string;
  program?: string;
  module?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  python?: string;
  device?: string;
  devices?: number;
  sanitizer?: boolean;
  /** true, false, or a directory for lines.json and trace.json. */
  profile?: boolean | string;
  stopOnEntry?: boolean;
  justMyCode?: boolean;
  stopOnAclError?: boolean;
  [key: string]: unknown;
}

export interface ResolveContext {
  /** Active editor's file and language, if any. */
  activeFile?: { path: string; languageId: string };
  workspaceFolder?: string;
  interpreter: string;
  deviceProfile: string;
  deviceCount: number;
}

export type Resolution = { config: LaunchConfig } | { error: string };

/**
 * Fills in a launch configuration. An empty one (F5 without launch.json) becomes "launch the active
 * Python file"; missing fields come from settings. Returns an error message instead of a config
 * when there is nothing sensible to run.
 */
export function resolveLaunchConfig(input: Partial<LaunchConfig>, ctx: ResolveContext): Resolution {
  const cfg: LaunchConfig = { ...input, type: input.type ?? DEBUG_TYPE, request: input.request ?? "launch", name: input.name ?? "" };
  const empty = !input.type && !input.request && !input.name;
  if (empty) {
    if (!ctx.activeFile || ctx.activeFile.languageId !== "python") {
      return { error: "Open a Python file to debug it on the emulated Ascend NPU, or add an `ascend-npu` configuration to launch.json." };
    }
    cfg.name = "Ascend NPU: current file";
    cfg.program = ctx.activeFile.path;
  }
  if (cfg.request !== "launch") return { error: `Ascend NPU debugging supports "launch" only, not "${cfg.request}".` };
  if (!cfg.program && !cfg.module) {
    if (ctx.activeFile?.languageId === "python") cfg.program = ctx.activeFile.path;
    else return { error: 'The Ascend NPU launch configuration needs a "program" (a Python file) or a "module".' };
  }
  if (cfg.args !== undefined && (!Array.isArray(cfg.args) || cfg.args.some((a) => typeof a !== "string"))) {
    return { error: '"args" must be a list of strings.' };
  }
  if (cfg.devices !== undefined && (!Number.isInteger(cfg.devices) || cfg.devices < 1)) {
    return { error: '"devices" must be a positive integer.' };
  }
  cfg.name ||= "Ascend NPU";
  cfg.python ??= ctx.interpreter;
  cfg.device ??= ctx.deviceProfile;
  cfg.devices ??= ctx.deviceCount;
  cfg.cwd ??= ctx.workspaceFolder ?? (cfg.program ? dirname(cfg.program) : ".");
  cfg.args ??= [];
  cfg.sanitizer ??= true;
  cfg.profile ??= true;
  cfg.justMyCode ??= true;
  cfg.stopOnAclError ??= true;
  return { config: cfg };
}

function dirname(p: string): string {
  const i = Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\"));
  return i > 0 ? p.slice(0, i) : ".";
}

/** The adapter process: `<python> -m ascend_lens debug-adapter`. */
export function adapterCommand(python: string): { command: string; args: string[] } {
  return { command: python, args: cliArgs("debug-adapter") };
}
