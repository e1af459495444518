import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parseProfile, parseProfileText, ProfileFormatError, PROFILE_SCHEMA } from "../../extension/profile/model";
import { sampleProfile } from "./fixtures/profile";

const ROOT = join(__dirname, "..", "..", "..");

describe("parseProfile", () => {
  it("accepts the example document of docs/profile-format.md unchanged", () => {
    const doc = readFileSync(join(ROOT, "docs", "profile-format.md"), "utf8");
    const json = /```json\n([\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(json, "docs/profile-format.md has a json example");
    const p = parseProfileText(json);
    assert.equal(p.schema, PROFILE_SCHEMA);
    assert.equal(p.device, "Ascend910B2");
    assert.equal(p.lines[0]?.line, 42);
    assert.deepEqual(p.lines[0]?.top_ops.map((o) => o.op_type), ["MatMul", "Add"]);
    assert.equal(p.top_ops[0]?.share, 0.525);
  });

  it("round-trips a valid profile", () => {
    assert.deepEqual(parseProfile(JSON.parse(JSON.stringify(sampleProfile()))), sampleProfile());
  });

  it("treats a missing trace as null", () => {
    const { trace: _t, ...rest } = sampleProfile();
    assert.equal(parseProfile(rest).trace, null);
  });

  it("refuses another schema, naming it", () => {
    assert.throws(() => parseProfile({ ...sampleProfile(), schema: "ascend-lens.profile/2" }), {
      name: "ProfileFormatError",
      message: 'profile.schema: expected "ascend-lens.profile/1", got "ascend-lens.profile/2"',
    });
  });

  it("names the first bad field by its path", () => {
    const p = sampleProfile() as unknown as { lines: { line: unknown }[] };
    p.lines[1]!.line = 0;
    assert.throws(() => parseProfile(p), { message: "profile.lines[1].line: expected >= 1, got 0" });
    p.lines[1]!.line = 2.5;
    assert.throws(() => parseProfile(p), { message: "profile.lines[1].line: expected an integer, got 2.5" });
    const q = sampleProfile() as unknown as { top_ops: Record<string, unknown>[] };
    delete q.top_ops[0]!.share;
    assert.throws(() => parseProfile(q), { message: "profile.top_ops[0].share: expected a number, got undefined" });
  });

  it("reports JSON syntax errors as format errors", () => {
    assert.throws(() => parseProfileText("{"), (e: unknown) => e instanceof ProfileFormatError && e.message.startsWith("profile: not valid JSON"));
    assert.throws(() => parseProfileText("[]"), { message: "profile: expected a JSON object, got an array" });
  });
});
