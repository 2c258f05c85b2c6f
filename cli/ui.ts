// Output helpers shared by the commands: colours, relative dates, JSON.
import pc from "picocolors";

let enabled = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;

export function setColor(on: boolean): void {
  enabled = on;
}

type Paint = (s: string) => string;
const wrap = (f: Paint): Paint => (s) => (enabled ? f(s) : s);
export const color = {
  bold: wrap(pc.bold),
  dim: wrap(pc.dim),
  red: wrap(pc.red),
  green: wrap(pc.green),
  yellow: wrap(pc.yellow),
  cyan: wrap(pc.cyan),
  magenta: wrap(pc.magenta),
};

export function out(line = ""): void {
  process.stdout.write(`${line}\n`);
}

export function json(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** "3 minutes ago", in the steps Git's relative dates use. */
export function relativeAge(unixSeconds: number, now = Date.now() / 1000): string {
  const d = Math.max(0, Math.round(now - unixSeconds));
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"} ago`;
  if (d < 90) return plural(d, "second");
  const m = Math.round(d / 60);
  if (m < 90) return plural(m, "minute");
  const h = Math.round(d / 3600);
  if (h < 36) return plural(h, "hour");
  const days = Math.round(d / 86400);
  if (days < 14) return plural(days, "day");
  if (days < 70) return plural(Math.round(days / 7), "week");
  if (days < 365) return plural(Math.round(days / 30), "month");
  return plural(Math.round(days / 365), "year");
}

export const isoDate = (unixSeconds: number): string => new Date(unixSeconds * 1000).toISOString();

export const short = (oid: string): string => oid.slice(0, 7);
