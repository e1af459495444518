// Starts `ascend-lens debug-adapter` (DAP on stdio) with the configuration's interpreter, and routes
// the adapter's custom events (`ascendProfile`, `ascendState`) to the profile store and Devices view.
import * as vscode from "vscode";
import { log } from "../common/log";
import { parseProfile, ProfileFormatError } from "../profile/model";
import type { ProfileStore } from "../profile/store";
import { adapterCommand, DEBUG_TYPE } from "./launchConfig";
import { parseEvaluateResult, STATE_EXPRESSION } from "./stateProbe";

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

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null;

/** Evaluates STATE_EXPRESSION in the top frame of the stopped thread; undefined when it cannot. */
async function probeState(session: vscode.DebugSession, threadId: number): Promise<unknown> {
  const trace: unknown = await session.customRequest("stackTrace", { threadId, startFrame: 0, levels: 1 });
  const frames = isObj(trace) && Array.isArray(trace.stackFrames) ? (trace.stackFrames as unknown[]) : [];
  const frameId = isObj(frames[0]) && typeof frames[0].id === "number" ? frames[0].id : undefined;
  if (frameId === undefined) return undefined;
  // "clipboard" asks debugpy for the untruncated value.
  const answer: unknown = await session.customRequest("evaluate", { expression: STATE_EXPRESSION, frameId, context: "clipboard" });
  return isObj(answer) && typeof answer.result === "string" ? parseEvaluateResult(answer.result) : undefined;
}

/**
 * Refreshes the Devices view whenever one of our sessions stops: the debug adapter sends no state
 * of its own, so the state is read from the stopped debuggee (an `ascendState` event, when an
 * adapter sends one, is used as well).
 */
export function watchStops(onState: (state: unknown) => void): vscode.Disposable {
  return vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
    createDebugAdapterTracker: (session) => ({
      onDidSendMessage: (m: unknown) => {
        if (!isObj(m) || m.type !== "event" || m.event !== "stopped" || !isObj(m.body)) return;
        const threadId = m.body.threadId;
        if (typeof threadId !== "number") return;
        probeState(session, threadId).then(
          (state) => state !== undefined && onState(state),
          (err: unknown) => log.debug(`Device state probe: ${String(err)}`),
        );
      },
    }),
  });
}
