// Every command the CLI knows, in the order `git undo --help` lists them.
import type { Command } from "../command.ts";
import { doctor } from "./doctor.ts";
import { gc } from "./gc.ts";
import { init } from "./init.ts";
import { list } from "./list.ts";
import { pick } from "./pick.ts";
import { redo } from "./redo.ts";
import { restore } from "./restore.ts";
import { show } from "./show.ts";
import { snapshot } from "./snapshot.ts";
import { undo } from "./undo.ts";
import { uninstall } from "./uninstall.ts";
import { watch } from "./watch.ts";

export const COMMANDS: readonly Command[] = [undo, redo, restore, pick, snapshot, list, show, gc, init, uninstall, doctor, watch];

export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
}
