// What the status bar item says. Pure, so every state's wording is tested.
import { socName } from "./deviceNames";

export type ServerState = "starting" | "running" | "stopped" | "failed" | "missing-package";

export interface StatusInput {
  state: ServerState;
  deviceProfile: string;
  deviceCount: number;
  interpreter: string;
  detail?: string;
}

export interface StatusView {
  text: string;
  tooltip: string;
  /** "error" | "warning" | undefined: which theme background to use. */
  severity?: "error" | "warning";
}

const ICONS: Record<ServerState, string> = {
  starting: "$(loading~spin)",
  running: "$(check)",
  stopped: "$(circle-slash)",
  failed: "$(error)",
  "missing-package": "$(warning)",
};

const WORDS: Record<ServerState, string> = {
  starting: "starting",
  running: "running",
  stopped: "stopped",
  failed: "failed to start",
  "missing-package": "Python package not installed",
};

export function statusView(s: StatusInput): StatusView {
  // The device by the name the runtime and the Devices view give it (Ascend910B2, not 910B).
  const name = socName(s.deviceProfile);
  const devices = s.deviceCount > 1 ? `${name} ×${s.deviceCount}` : name;
  const lines = [
    `Ascend Lens: server ${WORDS[s.state]}`,
    `Emulated device: ${devices}`,
    `Interpreter: ${s.interpreter}`,
  ];
  if (s.detail) lines.push(s.detail);
  lines.push("Click for actions");
  const view: StatusView = { text: `$(chip) ${devices} ${ICONS[s.state]}`, tooltip: lines.join("\n") };
  if (s.state === "failed") view.severity = "error";
  if (s.state === "missing-package") view.severity = "warning";
  return view;
}
