import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll } from '@jest/globals';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A temp folder that tests write real skill folders into; `cleanup()` removes it. */
export interface TempTree {
  root: string;
  path(...parts: string[]): string;
  write(relativePath: string, content: string | Buffer): string;
  cleanup(): void;
}

export function tempTree(prefix = 'skillhost-test-'): TempTree {
  const root = mkdtempSync(join(tmpdir(), prefix));
  return {
    root,
    path: (...parts) => join(root, ...parts),
    write(relativePath, content) {
      const file = join(root, relativePath);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export interface SkillFileOptions {
  name?: string;
  description?: string;
  /** Extra frontmatter lines, written as given. */
  extra?: string;
  body?: string;
}

/** The text of a SKILL.md; `name` and `description` default to valid values. */
export function skillMd(options: SkillFileOptions = {}): string {
  const lines = ['---'];
  if (options.name !== undefined) lines.push(`name: ${options.name}`);
  lines.push(`description: ${options.description ?? 'Does a useful thing. Use when a test needs a skill.'}`);
  if (options.extra) lines.push(options.extra);
  lines.push('---', '', options.body ?? '# Instructions\n\nDo the thing step by step.\n');
  return lines.join('\n');
}

/** Writes `<parent>/<folder>/SKILL.md` whose name is the folder name unless overridden. */
export function writeSkill(tree: TempTree, parent: string, folder: string, options: SkillFileOptions = {}): string {
  return tree.write(join(parent, folder, 'SKILL.md'), skillMd({ name: folder, ...options }));
}

/**
 * For a test file: a temp tree filled by `populate` before the file's tests and removed after them; call the result for
 * it.
 */
export function useSkillTree(populate: (tree: TempTree) => void): () => TempTree {
  let tree: TempTree | undefined;
  beforeAll(() => {
    tree = tempTree();
    populate(tree);
  });
  afterAll(() => tree?.cleanup());
  return () => tree!;
}

/**
 * `skills/` with `pdf` (its body holds PDF-BODY-MARKER, references/forms.md holds FORMS-MARKER) and `git-commit`: the
 * chat suites' skills.
 */
export function useChatSkillsTree(): () => TempTree {
  return useSkillTree((tree) => {
    writeSkill(tree, 'skills', 'pdf', {
      description: 'Works with PDF files.',
      body: '# PDF\n\nPDF-BODY-MARKER steps.\n',
    });
    tree.write('skills/pdf/references/forms.md', 'FORMS-MARKER');
    writeSkill(tree, 'skills', 'git-commit', { description: 'Writes commit messages.' });
  });
}

/**
 * For a test file: a temp `skills/` folder holding one skill, `pdf` (with references/forms.md),
 * made before the file's tests and removed after them; call the result for the folder's path.
 */
export function usePdfSkillsFolder(): () => string {
  const tree = useSkillTree((t) => {
    writeSkill(t, 'skills', 'pdf', { description: 'Works with PDF files.' });
    t.write('skills/pdf/references/forms.md', 'FORMS');
  });
  return () => tree().path('skills');
}
