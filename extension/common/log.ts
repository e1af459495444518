// The extension's log: one LogOutputChannel shared by the client, the bridge and the commands.
import type { LogOutputChannel } from "vscode";
import { createLogChannel } from "./vscodeapi";
import { DISPLAY_NAME } from "./constants";

let channel: LogOutputChannel | undefined;

export function logChannel(): LogOutputChannel {
  channel ??= createLogChannel(DISPLAY_NAME);
  return channel;
}

export const log = {
  info: (msg: string): void => logChannel().info(msg),
  warn: (msg: string): void => logChannel().warn(msg),
  error: (msg: string | Error): void => logChannel().error(msg),
  debug: (msg: string): void => logChannel().debug(msg),
  /** Raw process output (pip, run), appended as it comes. */
  raw: (text: string): void => logChannel().append(text),
};
