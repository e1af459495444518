// Device names as the runtime reports them (`soc_name`, e.g. "Ascend910B2"), for a configured
// profile or alias ("910B"), from the runtime's own table, bundled at build time: one name for a
// device before and after a run.
import table from "../../npu_runtime/data/devices.json";

const aliases: Readonly<Record<string, string>> = table.aliases;
const profiles: Readonly<Record<string, { soc_name?: unknown }>> = table.profiles;

/** The SoC name of a profile or alias (case-insensitive, as the runtime reads it); unknown names as given. */
export function socName(profile: string): string {
  const key = profile.toLowerCase();
  const canonical =
    Object.keys(profiles).find((k) => k.toLowerCase() === key) ??
    Object.entries(aliases).find(([alias]) => alias.toLowerCase() === key)?.[1];
  const soc = canonical !== undefined ? profiles[canonical]?.soc_name : undefined;
  return typeof soc === "string" ? soc : profile;
}
