import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GROUPS, LINES_GROUP, nodeId, OPS_GROUP, refreshTarget, shouldFire, type ProfileNode } from "../../extension/views/profileTree";
import { sampleProfile } from "./fixtures/profile";

describe("profile tree", () => {
  it("keeps the same group objects and gives every node a unique id", () => {
    assert.deepEqual(GROUPS, [LINES_GROUP, OPS_GROUP]);
    assert.ok(Object.isFrozen(LINES_GROUP) && Object.isFrozen(OPS_GROUP));
    const p = sampleProfile();
    const nodes: ProfileNode[] = [...GROUPS, ...p.lines.map((line) => ({ kind: "line" as const, line })), ...p.top_ops.map((op) => ({ kind: "op" as const, op }))];
    const ids = nodes.map(nodeId);
    assert.equal(new Set(ids).size, ids.length, ids.join(", "));
    assert.deepEqual(ids.slice(0, 2), ["group:lines", "group:ops"]);
    const first = p.lines[0]!;
    assert.equal(nodeId({ kind: "line", line: { ...first } }), `line:${first.file}:${first.line}`); // same line, next profile: same id
  });

  it("refreshes the root only for the first profile, the groups ever after", () => {
    assert.equal(refreshTarget(false, true), "root");
    assert.equal(refreshTarget(false, false), "none");
    assert.equal(refreshTarget(true, true), "groups");
    assert.equal(refreshTarget(true, false), "groups"); // cleared: the groups stay, empty
  });

  it("sends nothing after dispose or while hidden", () => {
    assert.equal(shouldFire(false, true), true);
    assert.equal(shouldFire(false, false), false);
    assert.equal(shouldFire(true, true), false);
  });
});
