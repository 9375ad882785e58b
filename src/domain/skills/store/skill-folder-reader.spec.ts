import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { readSkillFolder } from './skill-upload.reader.js';

const LIMITS = { maxBytes: 1024, maxFiles: 3 };

describe(readSkillFolder.name, () => {
  let folder: string;
  const write = (path: string, content: string) => {
    mkdirSync(join(folder, path, '..'), { recursive: true });
    writeFileSync(join(folder, path), content);
  };
  const failure = (): AppError => {
    try {
      readSkillFolder(folder, LIMITS);
    } catch (error) {
      if (AppError.isInstance(error)) return error;
      throw error;
    }
    throw new Error('the folder was accepted');
  };
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'skillhost-folder-'));
    write('SKILL.md', '---\nname: x\n---\n');
  });
  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it('reads regular files by relative path in name order, leaving .git out', () => {
    write('references/b.md', 'b');
    write('.git/config', '[core]');
    expect(readSkillFolder(folder, LIMITS).map((file) => [file.path, file.bytes.toString()])).toEqual([
      ['SKILL.md', '---\nname: x\n---\n'],
      ['references/b.md', 'b'],
    ]);
  });

  it('refuses a symbolic link, even one that stays inside (INVALID_ARCHIVE naming it)', () => {
    symlinkSync('SKILL.md', join(folder, 'again.md'));
    expect(failure()).toMatchObject({ code: ErrorCode.INVALID_ARCHIVE, details: { entry: 'again.md' } });
  });

  it('refuses a FIFO without opening it (a read would block)', () => {
    execFileSync('mkfifo', [join(folder, 'pipe')]);
    expect(failure()).toMatchObject({ code: ErrorCode.INVALID_ARCHIVE, details: { type: 'special file' } });
  });

  it('refuses past the file and byte caps (PAYLOAD_TOO_LARGE)', () => {
    for (const name of ['a', 'b', 'c']) write(name, name);
    expect(failure()).toMatchObject({ code: ErrorCode.PAYLOAD_TOO_LARGE, details: { limit: 'maxFiles' } });
    rmSync(join(folder, 'c'));
    write('b', 'x'.repeat(2000));
    expect(failure().code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
  });
});
