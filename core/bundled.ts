// Whether this code runs from the bundle or from the sources: build/bundle.ts
// defines GIT_UNDO_BUNDLED as it builds; in the sources it is no variable at all.
// (Not import.meta.path: the CommonJS bundle holds each module's source path.)
declare const GIT_UNDO_BUNDLED: true | undefined;
export const BUNDLED: boolean = typeof GIT_UNDO_BUNDLED !== "undefined";

declare global {
  /**
   * The part of the CLI a bundle holds (build/bundle.ts defines it for each
   * part's build): undefined in the whole bundle and in the sources, which
   * hold every command (cli/commands/index.ts).
   */
  var GIT_UNDO_PART: string | undefined;
}

/** The part of the CLI this bundle holds, or undefined for all of it. */
export const BUNDLE_PART: string | undefined = globalThis.GIT_UNDO_PART;
