// Bytes that may not be UTF-8, as strings and back, and NUL-separated records:
// what crosses to and from Git (core/git.ts) and what the format's blobs hold.
// A module of its own, importing nothing, so that every other can use it.

/*
 * Ref names, reflog and stash messages are bytes, and need not be UTF-8 (a
 * Latin-1 commit subject, a branch named with byte 0xE9). Core strings carry
 * them losslessly: bytes read from Git or from its files are decoded as UTF-8
 * where they are valid, and each byte of an invalid sequence becomes the lone
 * surrogate U+DC80..U+DCFF (Python's "surrogateescape"); encodeBytes turns
 * those back into the same bytes. Valid UTF-8 reads exactly as before. Decode
 * with decodeBytes and encode with encodeBytes wherever such a value crosses
 * to or from Git (core/git.ts does so for stdout, stdin and arguments); a
 * display shows an escaped byte as U+FFFD. Blobs keep the bytes exactly; a
 * commit message is given to commit-tree with the exact bytes too (as the
 * spec's step 6 does), and Git itself stores them as UTF-8 (see commitText).
 */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const utf8 = new TextEncoder();
const ESCAPED = /[\uDC80-\uDCFF]/u; // with the u flag only unpaired surrogates match

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when it is not one. */
function utf8Length(b: Uint8Array, i: number): number {
  const c = b[i]!;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** Bytes as a core string: UTF-8, with each invalid byte kept as U+DC00 + byte. */
export function decodeBytes(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    let out = "";
    let start = 0;
    for (let i = 0; i < bytes.length; ) {
      const n = utf8Length(bytes, i);
      if (n > 0) {
        i += n;
        continue;
      }
      out += strictUtf8.decode(bytes.subarray(start, i)) + String.fromCharCode(0xdc00 + bytes[i]!);
      start = ++i;
    }
    return out + strictUtf8.decode(bytes.subarray(start));
  }
}

/** Whether a core string holds bytes that are not UTF-8. */
export const hasEscapedBytes = (s: string): boolean => ESCAPED.test(s);

/** A core string back to its bytes (the inverse of decodeBytes). */
export function encodeBytes(s: string): Uint8Array {
  if (!ESCAPED.test(s)) return utf8.encode(s);
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch.length === 1 && cp >= 0xdc80 && cp <= 0xdcff) out.push(cp - 0xdc00);
    else out.push(...utf8.encode(ch));
  }
  return new Uint8Array(out);
}

/** The NUL-terminated records of a blob, as views into it (a last record without its NUL is dropped). */
export function nulRecords(blob: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < blob.length; i++) {
    if (blob[i] !== 0) continue;
    out.push(blob.subarray(start, i));
    start = i + 1;
  }
  return out;
}
