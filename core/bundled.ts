// Whether this code runs from the bundle or from the sources: build/bundle.ts
// defines GIT_UNDO_BUNDLED as it builds; in the sources it is no variable at all.
// (Not import.meta.path: the CommonJS bundle holds each module's source path.)
declare const GIT_UNDO_BUNDLED: true | undefined;
export const BUNDLED: boolean = typeof GIT_UNDO_BUNDLED !== "undefined";
