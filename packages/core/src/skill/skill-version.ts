import { createHash } from 'node:crypto';

/** One file of a version, as the manifest lists it. */
export interface ManifestEntry {
  readonly path: string;
  readonly size: number;
  readonly digest: string;
}

/** A version's identity: its digest and what it holds. */
export interface SkillVersion {
  readonly digest: string;
  readonly files: readonly ManifestEntry[];
  readonly totalBytes: number;
}

/** `sha256:<hex>` of some bytes: how files and versions are named in the store. */
export function contentDigest(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Paths compare by their UTF-8 bytes, so every platform and locale orders a manifest alike. */
export function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The version of a set of files. Its digest covers the sorted manifest of path and file digest
 * (one JSON array of `[path, digest]` pairs), so the same files give the same version wherever
 * they came from (an archive, a form, a folder on disk), and any change of a path or a byte
 * gives another.
 */
export function versionOf(files: readonly { path: string; bytes: Uint8Array }[]): SkillVersion {
  const entries = files
    .map((file) => ({ path: file.path, size: file.bytes.length, digest: contentDigest(file.bytes) }))
    .sort((a, b) => comparePaths(a.path, b.path));
  const digest = contentDigest(JSON.stringify(entries.map((entry) => [entry.path, entry.digest])));
  return { digest, files: entries, totalBytes: entries.reduce((sum, entry) => sum + entry.size, 0) };
}

/** The hex part of a digest: a folder name in the cache. */
export function digestHex(digest: string): string {
  return digest.slice('sha256:'.length);
}

export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;
