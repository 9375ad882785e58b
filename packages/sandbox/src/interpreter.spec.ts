import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  chooseInterpreter,
  type InterpreterChoice,
  isExecutableFile,
  isSandboxProgram,
  parseShebang,
} from './interpreter.js';

/** Every interpreter installed in /usr/bin, as on a merged-/usr Debian. */
const inUsrBin = (path: string) => path.startsWith('/usr/bin/');

function choose(path: string, head: string | Buffer, exists: (path: string) => boolean = inUsrBin): InterpreterChoice {
  return chooseInterpreter(path, typeof head === 'string' ? Buffer.from(head) : head, exists);
}

describe(parseShebang.name, () => {
  it.each([
    ['#!/bin/sh\necho', { kind: 'interpreter', program: '/bin/sh', options: [] }],
    ['#!/bin/sh -e\n', { kind: 'interpreter', program: '/bin/sh', options: ['-e'] }],
    ['#! /bin/bash -e -u\n', { kind: 'interpreter', program: '/bin/bash', options: ['-e', '-u'] }],
    ['#!/usr/bin/env python3\n', { kind: 'interpreter', program: 'python3', options: [] }],
    ['#!/usr/bin/env -S node --no-warnings\n', { kind: 'interpreter', program: 'node', options: ['--no-warnings'] }],
    ['#!/usr/bin/env python3 -u\r\nprint()', { kind: 'interpreter', program: 'python3', options: ['-u'] }],
    ['#!/bin/sh\r\n', { kind: 'interpreter', program: '/bin/sh', options: [] }],
    ['\uFEFF#!/usr/bin/env node\n', { kind: 'interpreter', program: 'node', options: [] }],
    ['#!/bin/sh', { kind: 'interpreter', program: '/bin/sh', options: [] }],
    ['echo hi\n', { kind: 'none' }],
    ['', { kind: 'none' }],
    [' #!/bin/sh\n', { kind: 'none' }],
    ['#/bin/sh\n', { kind: 'none' }],
  ])('reads %j', (head, expected) => {
    expect(parseShebang(Buffer.from(head))).toEqual(expected);
  });

  it.each([
    ['#!\n', 'names no program'],
    ['#!   \r\n', 'names no program'],
    ['#!sh\n', "'sh', which is not an absolute path; write e.g. '#!/usr/bin/env sh'"],
    ['#!/usr/bin/env\n', 'runs env without a program'],
    ['#!/usr/bin/env -i python3\n', "passes '-i' to env; only '-S' is supported"],
    ['#!/bin/sh ./other.sh\n', "passes './other.sh' to /bin/sh; only options"],
    ['#!/bin/sh -a -b -c -d -e -f -g -h -i\n', 'more than 8 options'],
    ['#!/bin/sh\0-x\n', 'NUL byte'],
    [`#!/bin/${'x'.repeat(300)}`, 'longer than 256 bytes'],
  ])('refuses %j (%s)', (head, reason) => {
    const sut = parseShebang(Buffer.from(head));
    expect(sut.kind === 'invalid' ? sut.reason : sut.kind).toContain(reason);
  });

  it('only looks at the first 256 bytes, as Linux does', () => {
    expect(parseShebang(Buffer.from(`#!/bin/sh\n${'x'.repeat(10_000)}`))).toEqual({
      kind: 'interpreter',
      program: '/bin/sh',
      options: [],
    });
  });
});

describe(chooseInterpreter.name, () => {
  it.each([
    ['scripts/a.sh', 'sh', '/usr/bin/sh'],
    ['scripts/a.bash', 'bash', '/usr/bin/bash'],
    ['scripts/a.py', 'python3', '/usr/bin/python3'],
    ['scripts/a.js', 'node', '/usr/bin/node'],
    ['scripts/a.mjs', 'node', '/usr/bin/node'],
    ['scripts/a.cjs', 'node', '/usr/bin/node'],
    ['scripts/A.PY', 'python3', '/usr/bin/python3'],
    ['scripts/v1.2/run.sh', 'sh', '/usr/bin/sh'],
  ])('runs %s without a shebang with %s', (path, name, command) => {
    expect(choose(path, 'print(1)\n')).toEqual({ name, command, args: [] });
  });

  it('prefers the shebang to the extension, and keeps its options', () => {
    expect(choose('scripts/a.py', '#!/bin/sh -e\n')).toEqual({ name: 'sh', command: '/usr/bin/sh', args: ['-e'] });
    expect(choose('scripts/tool', '#!/usr/bin/env python3\n')).toEqual({
      name: 'python3',
      command: '/usr/bin/python3',
      args: [],
    });
    expect(choose('scripts/tool', '#!/usr/local/bin/node\n')).toEqual({
      name: 'node',
      command: '/usr/bin/node',
      args: [],
    });
  });

  it(
    "looks in /usr/local/bin first (the sandbox PATH's order), then /usr/bin, then /bin, and says when the " +
      'interpreter is not installed',
    () => {
      expect(choose('a.js', '', (path) => path === '/usr/local/bin/node' || path === '/usr/bin/node')).toEqual({
        name: 'node',
        command: '/usr/local/bin/node',
        args: [],
      });
      expect(choose('a.sh', '', (path) => path === '/bin/sh')).toEqual({ name: 'sh', command: '/bin/sh', args: [] });
      expect(choose('a.py', '', () => false)).toEqual({
        error:
          'it needs python3, which is not installed on this server (looked in /usr/local/bin, /usr/bin and /bin); ' +
          'ask the operator to install it.',
      });
    },
  );

  it.each([
    [
      'a.pl',
      '#!/usr/bin/perl\n',
      "its shebang names '/usr/bin/perl', which is not an allowed interpreter; use one of sh, bash, python3, " +
        "node (e.g. '#!/usr/bin/env python3').",
    ],
    ['a.py', '#!/usr/bin/python3.11\n', "its shebang names '/usr/bin/python3.11', which is not an allowed interpreter"],
    ['a.py', '#!/usr/bin/env python\n', "its shebang names 'python', which is not an allowed interpreter"],
    [
      'a.rb',
      'puts 1\n',
      "it has no shebang and its extension '.rb' is not one of .sh, .bash, .py, .js, .mjs, .cjs; add a first " +
        "line such as '#!/usr/bin/env python3' or '#!/bin/sh'.",
    ],
    ['scripts/tool', 'echo\n', 'it has no shebang and it has no extension (.sh, .bash, .py, .js, .mjs, .cjs)'],
    ['scripts/.bashrc', 'echo\n', 'it has no extension'],
    ['scripts/native', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), 'it has no shebang and it has no extension'],
    ['a.sh', '#!sh\n', 'which is not an absolute path'],
  ])('refuses %s (%j)', (path, head, error) => {
    const sut = choose(path, head);
    expect('error' in sut ? sut.error : sut).toContain(error);
  });
});

describe(isSandboxProgram.name, () => {
  it(
    'takes an executable that really lives under /usr or /bin, and refuses one elsewhere, which the sandbox would ' +
      'not see',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'skillhost-program-'));
      try {
        const elsewhere = join(dir, 'node');
        writeFileSync(elsewhere, '#!/bin/sh\n');
        chmodSync(elsewhere, 0o755);
        expect([isExecutableFile(elsewhere), isSandboxProgram(elsewhere)]).toEqual([true, false]);
        expect(isSandboxProgram('/usr/bin/env')).toBe(true);
        expect(isSandboxProgram('/usr/bin/no-such-program')).toBe(false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
