import { createHash } from 'node:crypto';
import { comparePaths, digestHex } from '@skillhost/core';

/**
 * The discovery index proposal's skill-level digest (https://github.com/cloudflare/agent-skills-discovery-rfc,
 * Integrity): SHA-256 of the `path NUL hex LF` lines of the files sorted by path (byte order). This server's index
 * publishes it, and an index import recomputes it from what it downloaded, so both sides use this one definition.
 */
export function skillDigest(files: readonly { path: string; digest: string }[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort((a, b) => comparePaths(a.path, b.path)))
    hash.update(`${file.path}\0${digestHex(file.digest)}\n`);
  return `sha256:${hash.digest('hex')}`;
}
