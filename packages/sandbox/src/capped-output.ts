/**
 * A script's output, kept up to a byte cap. Chunks are kept in the order they arrive (stdout and
 * stderr share one pipe inside the sandbox, so that is the order the script wrote them). Past the
 * cap nothing more is kept and the caller stops the script; the text is cut at a character
 * boundary and ends with a notice line, so a reader cannot mistake it for the whole output.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private cut = false;

  constructor(private readonly capBytes: number) {}

  /** Keeps what fits; returns false once the output went past the cap. */
  add(chunk: Buffer): boolean {
    if (this.cut) return false;
    const room = this.capBytes - this.size;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return true;
    }
    this.chunks.push(chunk.subarray(0, room));
    this.size = this.capBytes;
    this.cut = true;
    return false;
  }

  get truncated(): boolean {
    return this.cut;
  }

  get bytes(): number {
    return this.size;
  }

  text(): string {
    const bytes = Buffer.concat(this.chunks, this.size);
    if (!this.cut) return bytes.toString('utf8');
    const kept = bytes.subarray(0, utf8Boundary(bytes)).toString('utf8');
    return `${kept}${kept.endsWith('\n') || kept === '' ? '' : '\n'}${truncationNotice(this.capBytes)}`;
  }
}

export function truncationNotice(capBytes: number): string {
  return `[output cut at ${capBytes} bytes; the script was stopped]`;
}

/** The largest length ≤ bytes.length that does not end inside a UTF-8 sequence. */
export function utf8Boundary(bytes: Buffer): number {
  let start = bytes.length;
  // Walk back over continuation bytes (10xxxxxx) to the lead byte of the last sequence.
  while (start > 0 && start > bytes.length - 4 && (bytes[start - 1] & 0xc0) === 0x80) start--;
  if (start === 0) return bytes.length;
  const lead = bytes[start - 1];
  const expected = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return bytes.length - (start - 1) >= expected ? bytes.length : start - 1;
}
