import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A real git repository for import tests: a working copy under `work` pushed to a bare repository
 * under `bare` (what `git+file://` sources name), built with the `git` binary and no user config.
 */
export interface GitRepo {
  bare: string;
  /** Writes files (relative path → content; null removes it) and commits them; the new commit's id. */
  commit(files: Record<string, string | null>, message: string): string;
  /** A symbolic link in the working copy, committed with the next commit. */
  link(path: string, target: string): void;
  tag(name: string): void;
  /** Pushes the current branch and tags to the bare repository. */
  push(): void;
}

/** A fixed author and no system or user git configuration: what every test's git runs with. */
export const GIT_TEST_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.test',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

export function gitRepo(root: string): GitRepo {
  const work = join(root, 'work');
  const bare = join(root, 'bare.git');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_TEST_IDENTITY }, encoding: 'utf8' }).trim();
  mkdirSync(work, { recursive: true });
  git(root, 'init', '--quiet', '--bare', '--initial-branch=main', bare);
  git(work, 'init', '--quiet', '--initial-branch=main', '.');
  git(work, 'remote', 'add', 'origin', bare);
  return {
    bare,
    commit(files, message) {
      for (const [path, content] of Object.entries(files)) {
        const file = join(work, path);
        if (content === null) rmSync(file, { force: true });
        else {
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, content);
        }
      }
      git(work, 'add', '--all');
      git(work, 'commit', '--quiet', '-m', message);
      return git(work, 'rev-parse', 'HEAD');
    },
    link(path, target) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      symlinkSync(target, join(work, path));
    },
    tag: (name) => git(work, 'tag', name),
    push: () => git(work, 'push', '--quiet', '--tags', 'origin', 'main'),
  };
}

/** A hook script that leaves `marker` behind if it ever runs. */
export function markerHook(folder: string, name: string, marker: string): void {
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, name), `#!/bin/sh\necho ran >> '${marker}'\n`);
  chmodSync(join(folder, name), 0o755);
}
