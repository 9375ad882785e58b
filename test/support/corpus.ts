import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The shared real-world corpus (../shared/corpus beside the repository, as on CI). */
export function corpusPath(...parts: string[]): string {
  const root = process.env.SKILLHOST_CORPUS ?? resolve(process.cwd(), '..', 'shared', 'corpus');
  if (!existsSync(root)) throw new Error(`The skills corpus is missing at ${root}; set SKILLHOST_CORPUS to its folder.`);
  return join(root, ...parts);
}

/** Every SKILL.md under a folder (any depth). */
export function findSkillFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'SKILL.md') files.push(join(entry.parentPath, entry.name));
  }
  return files.sort();
}
