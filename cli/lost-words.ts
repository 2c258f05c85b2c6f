// The words for lost work (core/find/lost.ts), for git undo rescue and log --lost.
import type { LostItem } from "../core/find/lost.ts";
import { escapeControls } from "../core/text.ts";
import { relativeAge, sizeText, type Palette } from "./ui.ts";

/** Each item's line (kind, id, age, what it is) and the lines under it. */
export function lostLines(color: Palette, items: readonly LostItem[], abbrev: number): string[] {
  const ages = items.map((i) => (i.date === null ? "time unknown" : relativeAge(i.date)));
  const ageWidth = Math.max(0, ...ages.map((a) => a.length));
  const indent = " ".repeat(8 + abbrev);
  return items.flatMap((item, k) => [
    `${color.bold(item.kind.padEnd(6))} ${color.yellow(item.id.slice(0, abbrev))} ${color.dim(ages[k]!.padEnd(ageWidth))}  ${escapeControls(title(item))}`,
    ...details(color, item).map((d) => `${indent}${d}`),
  ]);
}

/** The item's line: a stash entry's message, a commit's subject, a file's name and size. */
export function title(item: LostItem): string {
  if (item.kind === "stash") return item.message;
  if (item.kind === "commit") return item.subject;
  return `${item.path ?? "(no name)"} (${item.binary ? "binary, " : ""}${sizeText(item.size)})`;
}

/** The lines under it: files, branch and reflogs, first lines. */
export function details(color: Palette, item: LostItem): string[] {
  const held = item.reflogs.length ? `only a reflog still holds it (${item.reflogs.map((r) => r.replace(/^refs\/(heads\/)?/, "")).join(", ")}), until git gc expires it` : null;
  if (item.kind === "stash") {
    const files = item.files.length > 5 ? `${item.files.slice(0, 5).join(", ")} and ${item.files.length - 5} more` : item.files.join(", ");
    return [`files: ${escapeControls(files || "none")}`, ...(held ? [held] : [])];
  }
  if (item.kind === "commit") {
    const parts: string[] = [];
    if (item.branch) parts.push(`on ${escapeControls(item.branch)} (as ${item.branchFrom === "reflog" ? "the reflog" : "its message"} says)`);
    if (item.earlier) parts.push(`with ${item.earlier} lost ${item.earlier === 1 ? "commit" : "commits"} before it`);
    if (held) parts.push(held);
    return parts.length ? [parts.join("; ")] : [];
  }
  return [...(item.unrecorded ? ["seen by git-undo, never recorded (a capture thrown away)"] : []), ...item.lines.map((l) => color.dim(`| ${escapeControls(l)}`))];
}

/** What `git undo rescue <id>` does with it, or how to rescue it (a content no tree named needs a path). */
export function rescueOutcome(item: LostItem, abbrev: number): { can: boolean; text: string } {
  const id = item.id.slice(0, abbrev);
  if (item.kind === "stash") return { can: true, text: "comes back as the newest stash entry" };
  if (item.kind === "commit") return { can: true, text: `comes back as the branch rescued/${id}` };
  if (item.path !== null) return { can: true, text: `comes back as ${escapeControls(item.path)}, if nothing stands there` };
  return { can: false, text: `no tree named it: 'git undo rescue ${id} -- <path>' writes it to a new file` };
}
