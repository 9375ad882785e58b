import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { contentDigest, digestHex, isInside } from '@skillhost/core';

export interface CachedFile {
  readonly path: string;
  readonly digest: string;
}

/**
 * Store versions unpacked on the local disk, where discovery and the resource routes read them
 * like any skill folder: `<directory>/<hex digest>/<skill name>/…`. A version is written once,
 * into a private folder renamed into place whole, so a reader (or another instance sharing the
 * folder) sees all of it or none; what is there is never changed again, as its name is its content.
 * Files are checked against their digests when written, not when read.
 */
export class SkillCache {
  constructor(readonly directory: string) {}

  /** The skill folder of a version (whether or not it is unpacked yet). */
  folderOf(digest: string, name: string): string {
    return join(this.directory, digestHex(digest), folderName(name));
  }

  has(digest: string, name: string): boolean {
    return existsSync(join(this.folderOf(digest, name), 'SKILL.md'));
  }

  /**
   * Unpacks a version unless it is there already; `contents` gives the bytes by file digest. Each
   * file is checked against its digest before anything is renamed into place.
   */
  async materialise(
    digest: string,
    name: string,
    files: readonly CachedFile[],
    contents: (digests: readonly string[]) => Promise<ReadonlyMap<string, Buffer>>,
  ): Promise<string> {
    const folder = this.folderOf(digest, name);
    if (this.has(digest, name)) return folder;
    const bytes = await contents(files.map((file) => file.digest));
    const partial = join(this.directory, `.partial-${randomUUID()}`);
    const target = join(partial, folderName(name));
    try {
      mkdirSync(target, { recursive: true, mode: 0o755 });
      for (const file of files) {
        const content = bytes.get(file.digest);
        if (content === undefined || contentDigest(content) !== file.digest)
          throw new Error(`The store has no intact content for '${file.path}' of version ${digest}.`);
        const path = join(target, file.path);
        if (!isInside(target, path))
          throw new Error(`Refusing to unpack '${file.path}': it leads outside the skill folder.`);
        mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
        writeFileSync(path, content, { mode: file.path.startsWith('scripts/') ? 0o755 : 0o644, flag: 'wx' });
      }
      this.moveIntoPlace(target, folder, digest, name);
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
    return folder;
  }

  /**
   * Renames the written skill folder to `<digest>/<name>`. One digest may hold several names (in
   * lenient mode a SKILL.md need not name its skill, so two folders can have the same files). A
   * folder left incomplete there (its SKILL.md deleted by hand) is replaced.
   */
  private moveIntoPlace(written: string, folder: string, digest: string, name: string): void {
    mkdirSync(dirname(folder), { recursive: true, mode: 0o755 });
    if (existsSync(folder) && !this.has(digest, name)) rmSync(folder, { recursive: true, force: true });
    try {
      renameSync(written, folder);
    } catch (error) {
      // Another writer (this instance or one sharing the folder) put the same content in place first.
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !this.has(digest, name)) {
        throw new Error(
          `Cannot unpack version ${digest} of '${name}' into ${folder} ` +
            `(${code ?? (error as Error).message}); remove that folder and it is written again.`,
        );
      }
    }
  }
}

/**
 * The folder a skill's name gets: the name itself, or (a disk skill kept for a chat may have any
 * name lenient mode loads, such as `video-sdk/linux`) the name percent-encoded into one plain folder name.
 */
function folderName(name: string): string {
  const plain = name.length > 0 && name !== '.' && name !== '..' && !/[/\\\0%]/.test(name);
  return plain ? name : encodeURIComponent(name).replace(/\./g, '%2E');
}
