/** How every cut text of the skills module ends: what was kept, of how much, of what. */
export function truncationNotice(shown: number, total: number, path: string): string {
  return `[Truncated: showing the first ${shown} of ${total} bytes of ${path}.]`;
}

/** The text, or its first `maxBytes` UTF-8 bytes (never half a character) followed by the notice. */
export function capUtf8(text: string, maxBytes: number, what: string): { text: string; truncated: boolean } {
  // A UTF-16 unit is at most 3 UTF-8 bytes, so short texts skip the count.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const kept = new TextDecoder('utf-8').decode(bytes.subarray(0, maxBytes), { stream: true });
  return { text: `${kept}\n\n${truncationNotice(Buffer.byteLength(kept), bytes.length, what)}`, truncated: true };
}
