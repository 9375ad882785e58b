import { chmodSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { discoverSkills, type InvalidSkill } from '@skillhost/core';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { asNobody, makeFifo, makeSocket, makeSymlink, openToEveryone, releaseFifosLater } from './special-files.js';

/**
 * Special files where a SKILL.md should be, and folders the server's user cannot read: discovery
 * must neither block (a FIFO opened for reading waits for a writer, freezing start-up, reloads and
 * SIGTERM handling, since discovery is synchronous) nor pass over them in silence.
 */
describe('skill discovery among special files and unreadable folders', () => {
  let tree: TempTree;
  let socket: Server;
  let release: { stop(): void };
  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'good');
    makeFifo(tree.path('skills/fifo/SKILL.md'));
    makeFifo(tree.path('elsewhere/pipe'));
    makeSymlink(tree.path('elsewhere/pipe'), tree.path('skills/link-to-fifo/SKILL.md'));
    socket = await makeSocket(tree.path('skills/socket/SKILL.md'));
    makeSymlink('/dev/zero', tree.path('skills/device/SKILL.md'));
    mkdirSync(tree.path('skills/dir-named-skill-md/SKILL.md'), { recursive: true });
    // Without the fix the scan blocks on the FIFOs until this writer comes (then reads its line).
    release = releaseFifosLater([tree.path('skills/fifo/SKILL.md'), tree.path('elsewhere/pipe')], 2000);
  });
  afterAll(async () => {
    release.stop();
    await new Promise((resolve) => socket.close(resolve));
    tree.cleanup();
  });

  const errorsOf = (invalid: InvalidSkill[], folder: string) =>
    invalid.find((entry) => entry.path === tree.path('skills', folder))?.errors;

  it(
    'reports a FIFO, a symlink to one, a socket and a device as invalid, without opening them for a ' + 'blocking read',
    () => {
      const sut = discoverSkills({
        directories: [{ configured: 'skills', path: tree.path('skills') }],
        mode: 'standard',
        maxDepth: 1,
        maxSkills: 100,
      });
      expect(sut.skills.map((s) => s.name)).toEqual(['good']);
      expect(errorsOf(sut.invalid, 'fifo')).toEqual([
        'SKILL.md is a FIFO (named pipe), not a regular file; replace it with a text file',
      ]);
      expect(errorsOf(sut.invalid, 'link-to-fifo')).toEqual([
        'SKILL.md is a FIFO (named pipe), not a regular file; replace it with a text file',
      ]);
      expect(errorsOf(sut.invalid, 'socket')).toEqual([
        'SKILL.md is a socket, not a regular file; replace it with a text file',
      ]);
      expect(errorsOf(sut.invalid, 'device')).toEqual([
        'SKILL.md is a character device, not a regular file; replace it with a text file',
      ]);
      // A folder named SKILL.md is not a skill file: that folder is simply not a skill.
      expect(errorsOf(sut.invalid, 'dir-named-skill-md')).toBeUndefined();
      expect(sut.invalid).toHaveLength(4);
    },
  );

  it('does the same in lenient mode, which also looks for skill.md', () => {
    const sut = discoverSkills({
      directories: [{ configured: 'skills', path: tree.path('skills') }],
      mode: 'lenient',
      maxDepth: 1,
      maxSkills: 100,
    });
    expect(errorsOf(sut.invalid, 'fifo')).toEqual([
      'SKILL.md is a FIFO (named pipe), not a regular file; replace it with a text file',
    ]);
  });
});

describe('skill discovery as a user who cannot read everything', () => {
  let tree: TempTree;
  beforeAll(() => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'good');
    writeSkill(tree, 'skills', 'locked-file');
    writeSkill(tree, 'skills', 'locked-folder');
    writeSkill(tree, 'skills', 'no-search');
    writeSkill(tree, 'nested/collection', 'inner');
    writeSkill(tree, 'locked-root', 'hidden');
    writeSkill(tree, 'locked-target', 'linked');
    makeSymlink(tree.path('locked-target/linked'), tree.path('skills/linked'));
    openToEveryone(
      tree.root,
      tree.path('skills'),
      tree.path('skills/good'),
      tree.path('skills/locked-file'),
      tree.path('nested'),
    );
    openToEveryone(tree.path('skills/good/SKILL.md'));
    chmodSync(tree.path('skills/locked-file/SKILL.md'), 0o000);
    chmodSync(tree.path('skills/locked-folder'), 0o000);
    // Listable but not searchable: its entries are visible, its files cannot be opened.
    chmodSync(tree.path('skills/no-search'), 0o644);
    // Searchable but not listable: a collection whose skills cannot be found.
    chmodSync(tree.path('nested/collection'), 0o711);
    chmodSync(tree.path('locked-root'), 0o000);
    chmodSync(tree.path('locked-target'), 0o000);
  });
  afterAll(() => {
    for (const folder of [
      'skills/locked-folder',
      'skills/no-search',
      'nested/collection',
      'locked-root',
      'locked-target',
    ])
      chmodSync(tree.path(folder), 0o755);
    tree.cleanup();
  });

  const denied =
    "SKILL.md cannot be read: permission denied (EACCES); the server's user needs read access to it and search " +
    '(x) access to its folder';

  it('lists an unreadable SKILL.md and unreadable skill folders (linked ones too) as invalid, with the reason', () => {
    const sut = asNobody(() =>
      discoverSkills({
        directories: [{ configured: 'skills', path: tree.path('skills') }],
        mode: 'standard',
        maxDepth: 1,
        maxSkills: 100,
      }),
    );
    expect(sut.skills.map((s) => s.name)).toEqual(['good']);
    expect(sut.invalid).toEqual([
      { path: tree.path('skills/linked'), source: 'skills', name: undefined, errors: [denied], warnings: [] },
      { path: tree.path('skills/locked-file'), source: 'skills', name: undefined, errors: [denied], warnings: [] },
      { path: tree.path('skills/locked-folder'), source: 'skills', name: undefined, errors: [denied], warnings: [] },
      { path: tree.path('skills/no-search'), source: 'skills', name: undefined, errors: [denied], warnings: [] },
    ]);
    expect(sut.directories).toEqual([
      { configured: 'skills', path: tree.path('skills'), exists: true, skills: 1, invalid: 4 },
    ]);
  });

  it('reports a collection folder it cannot list when searching nested folders', () => {
    const sut = asNobody(() =>
      discoverSkills({
        directories: [{ configured: 'nested', path: tree.path('nested') }],
        mode: 'standard',
        maxDepth: 2,
        maxSkills: 100,
      }),
    );
    expect(sut.invalid).toEqual([
      {
        path: tree.path('nested/collection'),
        source: 'nested',
        errors: [
          'The folder cannot be listed to look for skills in it: cannot be read: permission denied (EACCES); ' +
            "the server's user needs read and search (r-x) access to it",
        ],
        warnings: [],
      },
    ]);
  });

  it('says why an unreadable skills directory is skipped', () => {
    const sut = asNobody(() =>
      discoverSkills({
        directories: [{ configured: 'locked-root', path: tree.path('locked-root') }],
        mode: 'standard',
        maxDepth: 1,
        maxSkills: 100,
      }),
    );
    expect(sut.warnings).toEqual([
      `Skills directory 'locked-root' (${tree.path('locked-root')}) cannot be read: permission denied (EACCES); ` +
        `the server's user needs read and search (r-x) access to it; skipped`,
    ]);
    expect(sut.directories[0].exists).toBe(false);
  });
});
