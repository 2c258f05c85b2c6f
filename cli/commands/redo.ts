// git undo redo [N]: go forward N snapshots again, skipping the navigation streak.
import { stepCommand } from "./undo.ts";

export const redo = stepCommand("redo");
