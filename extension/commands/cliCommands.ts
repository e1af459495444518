// Command lines of the `ascend-lens` subcommands the commands run. Pure, so the exact flags are tested.
import { cliArgs, type Settings } from "../common/settingsCore";

type Devices = Pick<Settings, "deviceProfile" | "deviceCount">;

/** `<python> -m ascend_lens run --device D --devices N --profile DIR FILE`. */
export function runArgs(settings: Devices, profileDir: string, file: string): string[] {
  return cliArgs("run", "--device", settings.deviceProfile, "--devices", String(settings.deviceCount), "--profile", profileDir, file);
}

/** `<python> -m ascend_lens kernel install --sys-prefix|--user --device D --devices N`. */
export function kernelInstallArgs(where: "sys-prefix" | "user", settings: Devices): string[] {
  return cliArgs("kernel", "install", `--${where}`, "--device", settings.deviceProfile, "--devices", String(settings.deviceCount));
}
