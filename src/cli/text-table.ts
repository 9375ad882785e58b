/** Aligned columns for people reading a terminal; `--json` is the form for scripts. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cells = [header, ...rows].map((row) => row.map(printable));
  const widths = header.map((_, column) => Math.max(...cells.map((row) => row[column]?.length ?? 0)));
  return cells.map((row) =>
    row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '),
  );
}

/** A timestamp to the second, or `-` for none. */
export function formatInstant(value: Date | null): string {
  return value === null ? '-' : value.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Control characters (a newline in a label) would break the columns or drive the terminal: shown escaped. */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it escapes
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
