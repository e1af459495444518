// The last per-line profile the editor received (from a run, a debug session or a notebook cell).
// Decorations and the Profile view both listen here, so every source updates both.
import * as vscode from "vscode";
import type { Profile } from "./model";

export type ProfileOrigin = "run" | "debug" | "notebook";

export interface ProfileEntry {
  profile: Profile;
  origin: ProfileOrigin;
  /** The file or notebook the run was for. */
  label: string;
  /** Whether the lines are decorated in editors (notebook profiles are shown in their output). */
  decorate: boolean;
  /** For a notebook cell: the file name the kernel compiled it under, and the cell's document. */
  cell?: { file: string; uri: vscode.Uri; index: number };
}

export class ProfileStore implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ProfileEntry | undefined>();
  readonly onDidChange = this.emitter.event;
  private entry: ProfileEntry | undefined;

  get current(): ProfileEntry | undefined {
    return this.entry;
  }

  set(entry: ProfileEntry): void {
    this.entry = entry;
    this.emitter.fire(entry);
  }

  clear(): void {
    this.entry = undefined;
    this.emitter.fire(undefined);
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
