// Every command the CLI knows, in the order `git undo --help` lists them.
import type { Command } from "../command.ts";
import { gc } from "./gc.ts";
import { list } from "./list.ts";
import { show } from "./show.ts";
import { snapshot } from "./snapshot.ts";

export const COMMANDS: readonly Command[] = [snapshot, list, show, gc];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
}
