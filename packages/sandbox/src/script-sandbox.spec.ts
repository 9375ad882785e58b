import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import {
  ADDRESS_SPACE_HEADROOM_BYTES,
  type HostPath,
  runSandboxed,
  SANDBOX_ENV,
  sandboxArgs,
  type SandboxRequest,
  type SandboxSpec,
} from './script-sandbox.js';

const MB = 1024 * 1024;

function spec(overrides: Partial<SandboxSpec> = {}): SandboxSpec {
  return {
    skillDir: '/srv/skills/pdf',
    command: ['/usr/bin/python3', './scripts/x.py', 'a b'],
    env: SANDBOX_ENV,
    memoryBytes: 256 * MB,
    maxProcesses: 16,
    prlimit: '/usr/bin/prlimit',
    sh: '/usr/bin/sh',
    ...overrides,
  };
}

const mergedUsr: HostPath[] = [
  { path: '/usr', kind: 'bind' },
  { path: '/bin', kind: 'symlink', target: 'usr/bin' },
  { path: '/lib', kind: 'symlink', target: 'usr/lib' },
  { path: '/etc/ld.so.cache', kind: 'bind' },
];

/** The value after `flag`, for flags that take one. */
function valueAfter(args: string[], flag: string): string | undefined {
  const index = args.indexOf(flag);
  return index < 0 ? undefined : args[index + 1];
}

/** [source, destination] of every mount that makes host files visible. */
function binds(args: string[]): string[][] {
  const found: string[][] = [];
  args.forEach((arg, i) => {
    if (/^--(ro-)?bind(-try)?$|^--dev-bind(-try)?$|^--bind-fd$/.test(arg)) found.push([arg, args[i + 1], args[i + 2]]);
  });
  return found;
}

describe(sandboxArgs.name, () => {
  const sut = sandboxArgs(spec(), mergedUsr);
  const bwrapOptions = sut.options;

  it('unshares every namespace, user namespaces included, and shares no network', () => {
    expect(bwrapOptions).toEqual(
      expect.arrayContaining([
        '--unshare-all',
        '--unshare-user',
        '--disable-userns',
        '--new-session',
        '--die-with-parent',
      ]),
    );
    expect(bwrapOptions).not.toContain('--share-net');
    expect(valueAfter(bwrapOptions, '--uid')).toBe('65534');
    expect(valueAfter(bwrapOptions, '--gid')).toBe('65534');
    expect(valueAfter(bwrapOptions, '--hostname')).toBe('sandbox');
  });

  it('binds only the runtime and the skill folder, all read-only', () => {
    expect(binds(bwrapOptions)).toEqual([
      ['--ro-bind', '/usr', '/usr'],
      ['--ro-bind', '/etc/ld.so.cache', '/etc/ld.so.cache'],
      ['--ro-bind', '/srv/skills/pdf', '/skill'],
    ]);
    expect(bwrapOptions.join(' ')).toContain('--symlink usr/bin /bin --symlink usr/lib /lib');
    expect(valueAfter(bwrapOptions, '--chdir')).toBe('/skill');
  });

  it('gives an empty /skill to the self-check', () => {
    const check = sandboxArgs(spec({ skillDir: null }), mergedUsr).options;
    expect(check.join(' ')).toContain('--dir /skill');
    expect(binds(check).map(([, source]) => source)).toEqual(['/usr', '/etc/ld.so.cache']);
  });

  it('makes /tmp the only writable place, sized at the memory limit, and the root read-only after every mount', () => {
    expect(bwrapOptions.join(' ')).toContain(`--size ${256 * MB} --tmpfs /tmp`);
    expect(bwrapOptions.join(' ')).toContain('--dev /dev --remount-ro /dev');
    const rootReadOnly = bwrapOptions.findIndex((arg, i) => arg === '--remount-ro' && bwrapOptions[i + 1] === '/');
    const lastMount = Math.max(
      ...bwrapOptions.map((arg, i) => (/^--(ro-bind|bind|tmpfs|symlink|dir|proc|dev)$/.test(arg) ? i : -1)),
    );
    expect(rootReadOnly).toBeGreaterThan(lastMount);
  });

  it('clears the environment and sets exactly the given variables', () => {
    const options = sandboxArgs(spec({ env: { ...SANDBOX_ENV, SKILL: 'pdf' } }), mergedUsr).options;
    expect(options).toContain('--clearenv');
    expect(options.indexOf('--clearenv')).toBeLessThan(options.indexOf('--setenv'));
    const set = options.flatMap((arg, i) => (arg === '--setenv' ? [`${options[i + 1]}=${options[i + 2]}`] : []));
    expect(set).toEqual(['PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/tmp', 'LANG=C.UTF-8', 'TMPDIR=/tmp', 'SKILL=pdf']);
  });

  it(
    'sets the limits with prlimit inside the sandbox, then merges stderr into stdout and runs the command ' +
      'as given',
    () => {
      expect(sut.command).toEqual([
        '/usr/bin/prlimit',
        '--nproc=17',
        `--data=${256 * MB}`,
        `--as=${256 * MB + ADDRESS_SPACE_HEADROOM_BYTES}`,
        `--fsize=${256 * MB}`,
        '--nofile=1024',
        '--core=0',
        '--',
        '/usr/bin/sh',
        '-c',
        'exec "$@" 2>&1',
        'sh',
        '/usr/bin/python3',
        './scripts/x.py',
        'a b',
      ]);
    },
  );

  it(
    'keeps every host path in the options (read from a pipe), off the command line the script can read as ' +
      '/proc/1/cmdline',
    () => {
      expect(sut.options).toContain('/srv/skills/pdf');
      expect(sut.command.filter((arg) => arg.includes('/srv/'))).toEqual([]);
      expect(sut.command.filter((arg) => arg.startsWith('--') && !arg.includes('='))).toEqual(['--']);
    },
  );

  it('recreates /bin and /lib as folders where the host has no merged /usr', () => {
    const split = sandboxArgs(spec(), [
      { path: '/usr', kind: 'bind' },
      { path: '/bin', kind: 'bind' },
      { path: '/lib', kind: 'bind' },
    ]).options;
    expect(binds(split).slice(0, 3)).toEqual([
      ['--ro-bind', '/usr', '/usr'],
      ['--ro-bind', '/bin', '/bin'],
      ['--ro-bind', '/lib', '/lib'],
    ]);
  });
});

describe(runSandboxed.name, () => {
  /** Checked before the disk is touched: the folder need not exist. */
  async function refusal(overrides: Partial<SandboxRequest>): Promise<Error> {
    const request: SandboxRequest = {
      skillDir: '/nonexistent/skill',
      scriptPath: 'scripts/x.sh',
      args: [],
      timeoutMs: 1000,
      maxOutputBytes: 1000,
      memoryBytes: 64 * MB,
      maxProcesses: 8,
      ...overrides,
    };
    return runSandboxed(request, '/nonexistent/bwrap').then(
      () => {
        throw new Error('expected a refusal');
      },
      (error: Error) => error,
    );
  }

  it.each([
    [
      { args: ['a\0b'] },
      "Script argument 1 holds a NUL byte, which cannot reach a program's argument list; remove it or pass the " +
        'data on stdin.',
    ],
    [
      { args: ['ok', 'x\uD800'] },
      "Script argument 2 holds an unpaired UTF-16 surrogate, which cannot reach a program's argument list; " +
        'remove it or pass the data on stdin.',
    ],
    [
      { args: ['x'.repeat(70_000)] },
      'Script arguments total 70001 bytes, over the 65536-byte limit; pass large input on stdin instead.',
    ],
    [
      { stdin: 'ok\0 but \uDC00' },
      'Script stdin holds an unpaired UTF-16 surrogate, which has no UTF-8 form; send well-formed text.',
    ],
    [
      { env: { PATH: '/tmp' } },
      'Environment variable PATH is fixed by the sandbox (/usr/local/bin:/usr/bin:/bin); choose another name.',
    ],
    [{ env: { HOME: '/root' } }, 'Environment variable HOME is fixed by the sandbox (/tmp); choose another name.'],
    [{ env: { 'A=B': 'x' } }, "Environment variable name 'A=B' is not valid; use letters, digits and '_'."],
    [{ env: { A: 'x\0y' } }, 'Environment variable A must be a string without NUL bytes.'],
  ])('refuses %j as a validation error', async (overrides, message) => {
    const error = await refusal(overrides as Partial<SandboxRequest>);
    expect(error).toBeInstanceOf(AppError);
    expect([(error as AppError).code, error.message]).toEqual([ErrorCode.VALIDATION_FAILED, message]);
  });

  it.each([
    [{ timeoutMs: 0 }, 'timeoutMs must be an integer ≥ 1, got 0'],
    [{ maxOutputBytes: 1.5 }, 'maxOutputBytes must be an integer ≥ 1, got 1.5'],
    [{ memoryBytes: 1024 }, `memoryBytes must be an integer ≥ ${16 * MB}, got 1024`],
    [{ maxProcesses: Number.NaN }, 'maxProcesses must be an integer ≥ 1, got NaN'],
  ])('refuses the limits %j as a programming error', async (overrides, message) => {
    const error = await refusal(overrides);
    expect(error).toBeInstanceOf(RangeError);
    expect(error.message).toContain(message);
  });

  it('refuses a path out of the skill by its text, before looking at the disk', async () => {
    const error = await refusal({ scriptPath: '../../etc/passwd' });
    expect((error as AppError).code).toBe(ErrorCode.RESOURCE_OUTSIDE_SKILL);
  });
});
