/**
 * The one order for skills and files everywhere (catalogue, listings, scans): by name, code point order, locale-free.
 */
export function compareByName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Folders no scan or listing walks into. */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['.git', 'node_modules']);
