// The Devices view: emulated devices with memory used/total and streams, from the last state the
// debug adapter or the notebook kernel reported, or the configured devices before any run.
import * as vscode from "vscode";
import {
  allocationsText,
  configuredDevices,
  memoryText,
  parseDevicesState,
  problemsText,
  streamsText,
  streamText,
  type DeviceState,
  type DevicesSnapshot,
  type StreamState,
} from "./devicesModel";

type Node = { kind: "device"; device: DeviceState } | { kind: "memory"; device: DeviceState } | { kind: "streams"; device: DeviceState } | { kind: "stream"; stream: StreamState };

export class DevicesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.emitter.event;
  private snapshot: DevicesSnapshot;

  constructor(private readonly configured: () => { profile: string; count: number }) {
    const c = configured();
    this.snapshot = configuredDevices(c.profile, c.count);
  }

  get current(): DevicesSnapshot {
    return this.snapshot;
  }

  /** Accepts a state report; returns false (and keeps the old one) when it is not one. */
  update(state: unknown, origin: string): boolean {
    const parsed = parseDevicesState(state, origin);
    if (!parsed) return false;
    if (parsed.devices.length === 0) {
      // The runtime has not started in that process yet: keep showing the configured devices.
      const c = this.configured();
      this.snapshot = { ...configuredDevices(c.profile, c.count), origin: `${origin}, runtime not started` };
    } else this.snapshot = parsed;
    this.emitter.fire();
    return true;
  }

  /** Back to the configured devices (settings changed, or the session that reported ended). */
  reset(): void {
    const c = this.configured();
    this.snapshot = configuredDevices(c.profile, c.count);
    this.emitter.fire();
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.snapshot.devices.map((device) => ({ kind: "device", device }));
    if (node.kind === "device") {
      const out: Node[] = [{ kind: "memory", device: node.device }];
      if (node.device.streams.length > 0) out.push({ kind: "streams", device: node.device });
      return out;
    }
    if (node.kind === "streams") return node.device.streams.map((stream) => ({ kind: "stream", stream }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "device": {
        const d = node.device;
        const item = new vscode.TreeItem(`Device ${d.id}`, vscode.TreeItemCollapsibleState.Expanded);
        const snap = this.snapshot;
        const idle = snap.origin === "settings" || snap.origin.endsWith("not started");
        item.description = `${d.name}${d.current ? " · current" : ""}${idle ? " · idle" : ""}`;
        item.iconPath = new vscode.ThemeIcon("circuit-board");
        const problems = problemsText(snap);
        item.tooltip = `${d.name} (emulated), reported by ${snap.origin}${problems ? `\n${problems}` : ""}`;
        return item;
      }
      case "memory": {
        const item = new vscode.TreeItem(memoryText(node.device));
        item.iconPath = new vscode.ThemeIcon("database");
        const allocations = allocationsText(node.device);
        if (allocations !== undefined) item.description = allocations;
        return item;
      }
      case "streams": {
        const item = new vscode.TreeItem(streamsText(node.device), vscode.TreeItemCollapsibleState.Collapsed);
        item.iconPath = new vscode.ThemeIcon("list-flat");
        return item;
      }
      case "stream": {
        const item = new vscode.TreeItem(streamText(node.stream));
        item.iconPath = new vscode.ThemeIcon("arrow-right");
        return item;
      }
    }
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
