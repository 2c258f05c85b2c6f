// A git undo command lives for tens of milliseconds: JavaScriptCore's JIT
// compiles code that then runs a few times and goes with the process. Made
// ten times as reluctant (Bun.unsafe.setJITPolicy scales the tier-up
// thresholds), the command's code mostly stays in the interpreter: on 5,000
// files a restore uses about 10 ms less CPU and `list -n 20` takes 2 ms less,
// and a listing of 3,000 snapshots is as fast as before. For the process that
// runs a command (cli/main.ts), not for a test runner that imports the CLI, nor
// for the worker, which lives on.
const JIT_SCALE = 10;

export function jitForShortLife(): void {
  if (typeof Bun.unsafe?.setJITPolicy === "function") Bun.unsafe.setJITPolicy(JIT_SCALE);
}
