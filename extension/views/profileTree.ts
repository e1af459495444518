// The Profile view's tree as plain data. Group nodes are constants and every item has an id, so
// VS Code's handles stay valid across updates. The root is refreshed once, when the first
// profile replaces the welcome text; after that the two groups stay (empty when the profile is
// cleared) and only they are refreshed. (A root refresh drops every handle while the workbench
// may still be asking for the children of an expanded group: "No tree item with id
// '1/group:ops'", "Unable to refresh tree view: Canceled" — seen in the e2e logs.) Pure.
import type { LineStat, OpStat } from "../profile/model";

export interface GroupNode {
  readonly kind: "group";
  readonly group: "lines" | "ops";
}
export type ProfileNode = GroupNode | { kind: "line"; line: LineStat } | { kind: "op"; op: OpStat };

export const LINES_GROUP: GroupNode = Object.freeze({ kind: "group", group: "lines" });
export const OPS_GROUP: GroupNode = Object.freeze({ kind: "group", group: "ops" });
export const GROUPS: readonly GroupNode[] = [LINES_GROUP, OPS_GROUP];

/** A unique id in the tree, the same for the same line or op in the next profile. */
export function nodeId(node: ProfileNode): string {
  switch (node.kind) {
    case "group":
      return `group:${node.group}`;
    case "line":
      return `line:${node.line.file}:${node.line.line}`;
    case "op":
      return `op:${node.op.op_type}`;
  }
}

/** What a profile change refreshes, from whether the groups are shown yet and whether there
 * is a profile now: the root only for the first profile, the groups ever after. */
export function refreshTarget(groupsShown: boolean, has: boolean): "root" | "groups" | "none" {
  if (groupsShown) return "groups";
  return has ? "root" : "none";
}

/** Whether to tell VS Code now: never after dispose, and not while the view is hidden (it is
 * refreshed when it shows again), so no refresh is left pending when the window goes. */
export function shouldFire(disposed: boolean, visible: boolean): boolean {
  return !disposed && visible;
}
