import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { runFolder } from './run-folder.js';

/** The real-world corpus, packed by tools/pack-corpus.sh (its README and each collection's SOURCE.md inside). */
export const CORPUS_ARCHIVE = resolve(process.cwd(), 'test', 'fixtures', 'skills-corpus.tar.gz');

/**
 * A path inside the real-world skills corpus: the folder in SKILLHOST_CORPUS when set, else the
 * repository's archive unpacked once into this run's folder. Unpacked beside its place and renamed
 * into it, so parallel workers never read a half-written corpus.
 */
export function corpusPath(...parts: string[]): string {
  const root = process.env.SKILLHOST_CORPUS ?? unpackedCorpus();
  if (!existsSync(root))
    throw new Error(`The skills corpus is missing at ${root}: unset SKILLHOST_CORPUS to use ${CORPUS_ARCHIVE}.`);
  return join(root, ...parts);
}

function unpackedCorpus(): string {
  const target = runFolder('corpus');
  if (existsSync(target)) return target;
  if (!existsSync(CORPUS_ARCHIVE))
    throw new Error(
      `The skills corpus archive is missing at ${CORPUS_ARCHIVE} (run the tests from the repository's root).`,
    );
  const staging = mkdtempSync(join(dirname(target), 'corpus-'));
  execFileSync('tar', ['-xzf', CORPUS_ARCHIVE, '-C', staging]);
  try {
    renameSync(staging, target);
  } catch (error) {
    // Another worker of this run put it there first.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(target)) throw error;
  }
  return target;
}

/** Every SKILL.md under a folder (any depth). */
export function findSkillFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === 'SKILL.md') files.push(join(entry.parentPath, entry.name));
  }
  return files.sort();
}
