// Finds the interpreter down the ladder: setting -> Python Environments API -> Python extension API
// -> python3. The marketplace extensions are optional: their APIs are used only when installed.
import * as vscode from "vscode";
import { log } from "./log";
import { chooseInterpreter, type InterpreterChoice } from "./settingsCore";

const PYTHON_EXT = "ms-python.python";
const PYTHON_ENVS_EXT = "ms-python.vscode-python-envs";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null;

async function exportsOf(id: string): Promise<Obj | undefined> {
  const ext = vscode.extensions.getExtension<unknown>(id);
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    return isObj(api) ? api : undefined;
  } catch (err) {
    log.warn(`${id} did not activate: ${String(err)}`);
    return undefined;
  }
}

/** Python Environments extension: `getEnvironment(scope).execInfo.run.executable`. */
async function fromPythonEnvironments(resource?: vscode.Uri): Promise<string | undefined> {
  const api = await exportsOf(PYTHON_ENVS_EXT);
  if (!api || typeof api.getEnvironment !== "function") return undefined;
  try {
    const env: unknown = await (api.getEnvironment as (s?: vscode.Uri) => Promise<unknown>)(resource);
    const exe = isObj(env) && isObj(env.execInfo) && isObj(env.execInfo.run) ? env.execInfo.run.executable : undefined;
    return typeof exe === "string" && exe ? exe : undefined;
  } catch (err) {
    log.warn(`Python Environments API: ${String(err)}`);
    return undefined;
  }
}

/** Python extension: `environments.resolveEnvironment(getActiveEnvironmentPath(resource))`. */
async function fromPythonExtension(resource?: vscode.Uri): Promise<string | undefined> {
  const api = await exportsOf(PYTHON_EXT);
  const envs = api && isObj(api.environments) ? api.environments : undefined;
  if (!envs || typeof envs.getActiveEnvironmentPath !== "function") return undefined;
  try {
    const active: unknown = (envs.getActiveEnvironmentPath as (r?: vscode.Uri) => unknown)(resource);
    const resolved: unknown =
      typeof envs.resolveEnvironment === "function" ? await (envs.resolveEnvironment as (e: unknown) => Promise<unknown>)(active) : undefined;
    const exe = isObj(resolved) && isObj(resolved.executable) && isObj(resolved.executable.uri) ? resolved.executable.uri.fsPath : undefined;
    if (typeof exe === "string" && exe) return exe;
    const p = isObj(active) ? active.path : undefined;
    return typeof p === "string" && p ? p : undefined;
  } catch (err) {
    log.warn(`Python extension API: ${String(err)}`);
    return undefined;
  }
}

export async function resolveInterpreter(setting: string, resource?: vscode.Uri): Promise<InterpreterChoice> {
  if (setting) return chooseInterpreter({ setting });
  const choice = chooseInterpreter({
    pythonEnvironments: await fromPythonEnvironments(resource),
    pythonExtension: await fromPythonExtension(resource),
  });
  if (choice.source === "default") {
    log.info(`Using ${choice.path}: set "ascend-lens.interpreter" or select an interpreter with the Python extension to change it.`);
  }
  return choice;
}

/** Fires when the Python extension's active interpreter changes (no-op when it is absent). */
export async function onInterpreterChanged(listener: () => void): Promise<vscode.Disposable> {
  const api = await exportsOf(PYTHON_EXT);
  const envs = api && isObj(api.environments) ? api.environments : undefined;
  const event = envs?.onDidChangeActiveEnvironmentPath;
  if (typeof event !== "function") return new vscode.Disposable(() => undefined);
  return (event as vscode.Event<unknown>)(() => listener());
}
