/**
 * Locates the YAML frontmatter of a SKILL.md in raw bytes, so discovery reads only the head of each
 * file. The block opens with a first line that is exactly `---` (after an optional UTF-8 BOM) and
 * closes at the first later line that is exactly `---`; a `---` inside a value does not close it.
 * Trailing spaces/tabs and CR (CRLF files) are tolerated on both fence lines.
 */
export const MAX_FRONTMATTER_BYTES = 64 * 1024;

export const FRONTMATTER_MESSAGES = {
  missingOpen: 'SKILL.md must start with YAML frontmatter (---)',
  notClosed: 'SKILL.md frontmatter not properly closed with ---',
  notClosedWithinCap: `SKILL.md frontmatter not properly closed with --- (no closing line within the first ${
    MAX_FRONTMATTER_BYTES / 1024
  } KiB)`,
} as const;

export type FrontmatterLocation =
  | { kind: 'found'; yamlStart: number; yamlEnd: number; bodyStart: number }
  | { kind: 'missing-open' }
  /** No closing fence in `length` bytes; more bytes of the file may still close it. */
  | { kind: 'unclosed' };

const DASH = 0x2d;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/** Index just past a fence line starting at `at`, or -1 if the line at `at` is not exactly `---`. */
function fenceEnd(bytes: Uint8Array, at: number, length: number, atEof: boolean): number {
  if (at + 3 > length || bytes[at] !== DASH || bytes[at + 1] !== DASH || bytes[at + 2] !== DASH) return -1;
  let i = at + 3;
  while (i < length && (bytes[i] === SPACE || bytes[i] === TAB || bytes[i] === CR)) i++;
  if (i === length) return atEof ? i : -1;
  return bytes[i] === LF ? i + 1 : -1;
}

/**
 * @param length bytes of `bytes` that hold file content
 * @param atEof whether those bytes are the whole file (a fence may then end without a newline)
 */
export function locateFrontmatter(bytes: Uint8Array, length: number, atEof: boolean): FrontmatterLocation {
  const start = length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const yamlStart = fenceEnd(bytes, start, length, atEof);
  if (yamlStart < 0) return { kind: 'missing-open' };
  let lineStart = yamlStart;
  while (lineStart < length) {
    const end = fenceEnd(bytes, lineStart, length, atEof);
    if (end >= 0) return { kind: 'found', yamlStart, yamlEnd: lineStart, bodyStart: end };
    const newline = bytes.indexOf(LF, lineStart);
    if (newline < 0 || newline >= length) break;
    lineStart = newline + 1;
  }
  return { kind: 'unclosed' };
}
