import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import {
  checkSandbox,
  describeRuntime,
  runSandboxed,
  SANDBOX_ENV,
  SANDBOX_UID,
  sandboxArgs,
  type SandboxRequest,
  type SandboxResult,
} from '@skillhost/sandbox';
import { makeFifo, makeSymlink, openToEveryone } from '../skills/special-files.js';
import { tempTree, type TempTree } from '../support/files/skill-tree.js';

/**
 * The sandbox with real bubblewrap and real skill folders: every hostile script below must be
 * contained, and what it got is asserted. Without a working bwrap the whole file is skipped with
 * the reason printed, never passed in silence.
 */
const sandboxProblem = await checkSandbox().then(
  () => undefined,
  (error: Error) => error.message,
);
if (sandboxProblem) console.warn(`SKIPPED script sandbox integration tests: ${sandboxProblem}`);
const describeWithSandbox = sandboxProblem ? describe.skip : describe;

const MB = 1024 * 1024;
/** Put in hostile scripts' names and arguments, so their processes can be found in /proc afterwards. */
const MARKER = `sbxmark${process.pid}`;
const SECRET = `SECRET-ENV-${MARKER}`;

describeWithSandbox('runSandboxed (bubblewrap)', () => {
  let tree: TempTree;
  let skillDir: string;
  let listener: Server;
  let listenerPort: number;
  let connections = 0;
  const savedSecret = process.env.SKILLHOST_TEST_SECRET;

  beforeAll(async () => {
    process.env.SKILLHOST_TEST_SECRET = SECRET;
    tree = tempTree();
    tree.write('config.toml', `[app]\napi_key = "CONFIG-${MARKER}"\n`);
    tree.write('skills/other/SKILL.md', `---\nname: other\n---\nSIBLING-${MARKER}\n`);
    tree.write('skills/tool/SKILL.md', '---\nname: tool\n---\n');
    tree.write('skills/tool/scripts/echo.sh', 'echo "args:$#" "$@"\n');
    tree.write('skills/tool/data.txt', 'just data\n');
    makeSymlink('../../other/SKILL.md', tree.path('skills/tool/scripts/link-out.sh'));
    makeFifo(tree.path('skills/tool/scripts/fifo.sh'));
    copyFileSync('/usr/bin/true', tree.path('skills/tool/scripts/native'));
    // Temp folders are 0700: when the tests run as root, the sandbox starts as nobody and must enter it.
    openToEveryone(tree.root);
    skillDir = tree.path('skills/tool');
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as { port: number }).port;
  });
  afterAll(async () => {
    if (savedSecret === undefined) delete process.env.SKILLHOST_TEST_SECRET;
    else process.env.SKILLHOST_TEST_SECRET = savedSecret;
    await new Promise((resolve) => listener.close(resolve));
    tree.cleanup();
  });

  /** Writes `scripts/<name>` into the skill and runs it with small limits. */
  async function run(name: string, content: string, overrides: Partial<SandboxRequest> = {}): Promise<SandboxResult> {
    tree.write(`skills/tool/scripts/${name}`, content);
    return runSandboxed({
      skillDir,
      scriptPath: `scripts/${name}`,
      args: [],
      timeoutMs: 10_000,
      maxOutputBytes: 64 * 1024,
      memoryBytes: 256 * MB,
      maxProcesses: 32,
      ...overrides,
    });
  }

  async function refusal(request: Partial<SandboxRequest>): Promise<AppError> {
    const error = await runSandboxed({
      skillDir,
      scriptPath: 'scripts/echo.sh',
      args: [],
      timeoutMs: 5000,
      maxOutputBytes: 4096,
      memoryBytes: 64 * MB,
      maxProcesses: 8,
      ...request,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }

  it('runs a script with its arguments and reports what ran', async () => {
    const sut = await runSandboxed({
      skillDir,
      scriptPath: 'scripts/echo.sh',
      args: ['a', 'b'],
      timeoutMs: 10_000,
      maxOutputBytes: 4096,
      memoryBytes: 64 * MB,
      maxProcesses: 8,
    });
    expect(sut).toEqual({
      path: 'scripts/echo.sh',
      command: 'sh scripts/echo.sh a b',
      exitCode: 0,
      signal: null,
      durationMs: expect.any(Number),
      timedOut: false,
      truncated: false,
      output: 'args:2 a b\n',
    });
  });

  it(
    'asks authorize with the resolved script and interpreter before running, and runs nothing when ' + 'it refuses',
    async () => {
      const seen: unknown[] = [];
      const refuse = (invocation: unknown) => {
        seen.push(invocation);
        throw new Error('not allowed');
      };
      await expect(
        runSandboxed({
          skillDir,
          scriptPath: './scripts//echo.sh',
          args: ['a'],
          timeoutMs: 10_000,
          maxOutputBytes: 4096,
          memoryBytes: 64 * MB,
          maxProcesses: 8,
          authorize: refuse,
        }),
      ).rejects.toThrow('not allowed');
      expect(seen).toEqual([{ interpreter: 'sh', scriptPath: 'scripts/echo.sh', args: ['a'] }]);
      expect(await leftovers()).toEqual([]);
    },
  );

  it(
    'mounts the real folder when given a symlink to it, and runs a script symlinked inside the skill ' +
      'by its target',
    async () => {
      makeSymlink(skillDir, tree.path('skills/alias'));
      makeSymlink('echo.sh', tree.path('skills/tool/scripts/alias.sh'));
      const sut = await runSandboxed({
        skillDir: tree.path('skills/alias'),
        scriptPath: 'scripts/alias.sh',
        args: ['x'],
        timeoutMs: 10_000,
        maxOutputBytes: 4096,
        memoryBytes: 64 * MB,
        maxProcesses: 8,
      });
      expect([sut.command, sut.output]).toEqual(['sh scripts/echo.sh x', 'args:1 x\n']);
    },
  );

  it(
    'keeps stdout and stderr in the order written, and reports a failing exit code (128 + N for a ' + 'signal inside)',
    async () => {
      const sut = await run('mixed.sh', 'echo one; echo two >&2; echo three; ls /no-such-file; exit 3\n');
      expect(sut.output).toBe("one\ntwo\nthree\nls: cannot access '/no-such-file': No such file or directory\n");
      expect(sut.exitCode).toBe(3);
      expect(sut.signal).toBeNull();
      const killedInside = await run('self-kill.sh', 'echo before; kill -SEGV $$; echo after\n');
      expect(killedInside).toMatchObject({ exitCode: 128 + 11, signal: null, output: 'before\n' });
    },
  );

  it('runs as nobody in a fresh PID namespace, with the skill folder as the working directory', async () => {
    const sut = await run('who.sh', 'id -u; id -g; pwd; echo pid=$$; ls /proc | grep -c "^[0-9]"; hostname\n');
    const [uid, gid, cwd, pid, processes, host] = sut.output.trim().split('\n');
    expect([uid, gid, cwd]).toEqual([String(SANDBOX_UID), String(SANDBOX_UID), '/skill']);
    // The sandbox's init is 1; the script and `ls`/`grep` are the only other processes.
    expect(Number(pid.slice(4))).toBeLessThan(10);
    expect(Number(processes)).toBeLessThan(6);
    expect(host).toBe('sandbox');
  });

  it(
    'shows nothing of the host but the runtime: no /etc/shadow, /root, /home, /run, other skills or ' + 'config',
    async () => {
      const hostPaths = [
        tree.path('skills/other/SKILL.md'),
        tree.path('config.toml'),
        `${process.cwd()}/config.toml`,
        `${process.cwd()}/package.json`,
      ];
      const sut = await run(
        'peek.sh',
        [
          'ls -A / | tr "\\n" " "; echo',
          'ls -A /etc | tr "\\n" " "; echo',
          'for f in /etc/shadow /etc/passwd /root /home /run/postgresql /var ../other/SKILL.md ../../config.toml ' +
            '"$@"; do',
          '  if cat "$f" >/dev/null 2>&1 || ls "$f" >/dev/null 2>&1; then echo "READABLE $f"; else echo "absent ' +
            '$f"; fi',
          'done',
          // /usr is the host's own, bound as it is; everything else in the sandbox is searched.
          `grep -rls "${MARKER}" / --exclude-dir=proc --exclude-dir=usr | head -3`,
        ].join('\n'),
        { args: hostPaths },
      );
      const lines = sut.output.trim().split('\n');
      const allowedRoot = new Set([
        'bin',
        'dev',
        'etc',
        'lib',
        'lib32',
        'lib64',
        'libx32',
        'proc',
        'skill',
        'tmp',
        'usr',
      ]);
      expect(
        lines[0]
          .trim()
          .split(' ')
          .filter((entry) => !allowedRoot.has(entry)),
      ).toEqual([]);
      expect(lines[1].trim().split(' ').sort()).toEqual(
        ['alternatives', 'ld.so.cache'].filter((entry) => existsSync(`/etc/${entry}`)),
      );
      expect(lines.filter((line) => line.startsWith('READABLE'))).toEqual([]);
      expect(lines.filter((line) => line.startsWith('absent'))).toHaveLength(8 + hostPaths.length);
      // The grep walked the whole sandbox: the marker (in the sibling skill, the config and this
      // process's environment) is nowhere; only the script itself, which names it, matches.
      expect(lines.filter((line) => line.startsWith('/') && !line.startsWith('/skill/scripts/'))).toEqual([]);
    },
  );

  it('refuses every write outside /tmp, and /tmp is private to the run', async () => {
    const sut = await run(
      'write.sh',
      [
        'for f in /x /usr/x /etc/x /dev/shm/x /skill/x ./scripts/x /proc/x; do if { echo w > "$f"; } ' +
          '2>/dev/null; then echo "WROTE $f"; else echo "refused $f"; fi; done',
        'echo hello > /tmp/t && cat /tmp/t',
        'echo home > "$HOME/h" && cat "$HOME/h"',
      ].join('\n'),
    );
    expect(sut.output).toBe(
      `${['/x', '/usr/x', '/etc/x', '/dev/shm/x', '/skill/x', './scripts/x', '/proc/x']
        .map((f) => `refused ${f}\n`)
        .join('')}hello\nhome\n`,
    );
    expect(readdirSync(skillDir).sort()).toEqual(['SKILL.md', 'data.txt', 'scripts']);
    const again = await run('tmp.sh', 'ls -A /tmp | wc -l\n');
    expect(again.output).toBe('0\n');
  });

  it('has no network: neither PostgreSQL on 127.0.0.1:5432, nor a server the test opens, nor the outside', async () => {
    const sut = await run(
      'net.py',
      [
        'import socket, sys',
        'for host, port in [("127.0.0.1", 5432), ("127.0.0.1", int(sys.argv[1])), ("1.1.1.1", 53), ("::1", 5432)]:',
        '    try:',
        '        socket.create_connection((host, port), timeout=2).close()',
        '        print("CONNECTED", host, port)',
        '    except OSError as e:',
        '        print("failed", host, port, type(e).__name__)',
      ].join('\n'),
      { args: [String(listenerPort)] },
    );
    expect(sut.output).not.toContain('CONNECTED');
    expect(sut.output.trim().split('\n')).toHaveLength(4);
    expect(connections).toBe(0);
  });

  it(
    'passes no secret of the server environment: only PATH, HOME, LANG and TMPDIR (and the caller’s ' + 'extras)',
    async () => {
      const sut = await run(
        'env.py',
        'import os\nfor k in sorted(os.environ): ' +
          'print(f"{k}={os.environ[k]}")\nprint("---")\nprint(open("/proc/1/environ").read().replace("\\0", ' +
          '"\\n"))\n',
        { env: { SKILL_NAME: 'tool' } },
      );
      expect(sut.output).not.toContain(SECRET);
      expect(sut.output).not.toContain('DATABASE_URL');
      const [scriptEnv, initEnv] = sut.output.split('---\n');
      // PWD comes from the shell that starts the script inside the sandbox.
      const expected = { ...SANDBOX_ENV, SKILL_NAME: 'tool', PWD: '/skill' };
      expect(scriptEnv.trim().split('\n')).toEqual(
        Object.entries(expected)
          .map(([k, v]) => `${k}=${v}`)
          .sort(),
      );
      // The sandbox's init (bwrap) was started with no environment at all.
      expect(initEnv.trim()).toBe('');
    },
  );

  // Regression, fixed since this pass found it. Was: /proc/1/cmdline (bwrap, the sandbox's init) held
  // every bind with its host path, and /proc/1/environ the server's PATH (naming /root: it ran as root).
  it(
    "shows in /proc no host path, no server PATH and no host process: bwrap's options came through a " + 'pipe',
    async () => {
      const sut = await run(
        'procs.sh',
        [
          'for p in /proc/[0-9]*; do echo "${p#/proc/} $(tr "\\0" " " < "$p/cmdline" 2>/dev/null)| $(tr "\\0" " " ' +
            '< "$p/environ" 2>/dev/null)"; done',
          'echo ---',
          'cat /proc/self/mountinfo',
        ].join('\n'),
        { args: ['one arg'] },
      );
      const [processes, mountinfo] = sut.output.split('---\n');
      const serverPath = process.env.PATH ?? '';
      for (const hostThing of [serverPath, tree.root, skillDir, SECRET, process.cwd()])
        expect(processes).not.toContain(hostThing);
      const lines = processes
        .trim()
        .split('\n')
        .map((line) => line.split(' | '));
      expect(lines[0]).toEqual([
        '1 bwrap --args 3 -- /usr/bin/prlimit --nproc=33 --data=268435456 --as=1342177280 --fsize=268435456 ' +
          '--nofile=1024 --core=0 -- /usr/bin/sh -c exec "$@" 2>&1 sh /usr/bin/sh ./scripts/procs.sh one arg',
        '',
      ]);
      expect(lines[1][0]).toBe('2 /usr/bin/sh ./scripts/procs.sh one arg');
      expect(lines[1][1].split(' ').sort()).toEqual(
        Object.entries({ ...SANDBOX_ENV, PWD: '/skill' })
          .map(([k, v]) => `${k}=${v}`)
          .sort(),
      );
      // Init and the script's own processes only, numbered from 1 in the sandbox's PID namespace.
      expect(lines.map(([head]) => Number(head.split(' ')[0])).filter((pid) => pid > 20)).toEqual([]);
      // The kernel names each bind mount's source in mountinfo (bwrap cannot hide it): the skill
      // folder is the one host path there; the runtime's paths are the same inside and out.
      const sources = mountinfo
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
        .map(([, , , root, mountPoint]) => ({ root, mountPoint }))
        .filter(
          ({ root, mountPoint }) =>
            root !== mountPoint &&
            root !== '/' &&
            mountPoint !== `/dev${root}` &&
            !(root === '/newroot' && mountPoint === '/'),
        )
        .map(({ root, mountPoint }) => `${root} on ${mountPoint}`);
      expect(sources).toEqual([`${skillDir} on /skill`]);
    },
  );

  it('passes stdin through, bytes as given', async () => {
    const sut = await run('cat.sh', 'cat; echo; echo done\n', { stdin: 'héllo\nwörld 🙂\tend' });
    expect(sut.output).toBe('héllo\nwörld 🙂\tend\ndone\n');
  });

  it('passes arguments literally: spaces, quotes, $(...) and globs are never interpreted', async () => {
    const args = [
      'a b',
      "it's",
      '"q"',
      '$(touch /tmp/pwned; echo INJECTED)',
      '`id`',
      '; echo INJECTED',
      '*',
      '',
      '\\n',
    ];
    const sut = await run('argv.sh', 'for a in "$@"; do printf "[%s]\\n" "$a"; done; ls /tmp\n', { args });
    expect(sut.output).toBe(args.map((a) => `[${a}]\n`).join(''));
    expect(sut.command).toBe(
      `sh scripts/argv.sh 'a b' 'it'\\''s' '"q"' '$(touch /tmp/pwned; echo INJECTED)' '\`id\`' '; echo ` +
        `INJECTED' '*' '' '\\n'`,
    );
  });

  it('runs python3 and node scripts by extension and by shebang, and bash when the shebang says so', async () => {
    const py = await run('ext.py', 'import sys\nprint("py", sys.version_info[0], sys.argv[1:])\n', { args: ['x'] });
    expect([py.command, py.output]).toEqual(['python3 scripts/ext.py x', "py 3 ['x']\n"]);
    const mjs = await run(
      'ext.mjs',
      'console.log("node", typeof process.versions.node, process.argv.slice(2).join(","))\n',
      { args: ['y', 'z'] },
    );
    expect([mjs.command, mjs.output]).toEqual(['node scripts/ext.mjs y z', 'node string y,z\n']);
    const pyShebang = await run('tool-py', '#!/usr/bin/env python3\nprint("from shebang")\n');
    expect([pyShebang.command, pyShebang.output]).toEqual(['python3 scripts/tool-py', 'from shebang\n']);
    const nodeShebang = await run('tool-node', '#!/usr/bin/node\r\nconsole.log("crlf shebang")\n');
    expect([nodeShebang.command, nodeShebang.output]).toEqual(['node scripts/tool-node', 'crlf shebang\n']);
    const bash = await run('b.sh', '#!/bin/bash -e\necho "bash ${BASH_VERSINFO[0]}"\nfalse\necho not reached\n');
    expect([bash.command, bash.output.trim(), bash.exitCode]).toEqual([
      'bash scripts/b.sh',
      expect.stringMatching(/^bash \d+$/),
      1,
    ]);
  });

  it('kills a script that runs past the timeout', async () => {
    const sut = await run('sleep.sh', 'echo started; sleep 1000\n', { timeoutMs: 800 });
    expect(sut).toMatchObject({
      timedOut: true,
      signal: 'SIGKILL',
      exitCode: null,
      truncated: false,
      output: 'started\n',
    });
    expect(sut.durationMs).toBeGreaterThanOrEqual(800);
  });

  it('kills a script that ignores SIGTERM, with the children it started in their own sessions', async () => {
    const sut = await run(
      `stubborn-${MARKER}.sh`,
      `trap '' TERM INT HUP\nsetsid sh -c "trap '' TERM; sleep 1000; :" ${MARKER} &\n(trap '' TERM; sleep 1001) ` +
        `&\necho forked\nwhile :; do sleep 0.1; done\n`,
      {
        timeoutMs: 800,
      },
    );
    expect(sut).toMatchObject({ timedOut: true, signal: 'SIGKILL', output: 'forked\n' });
    expect(await leftovers()).toEqual([]);
  });

  it('kills the sandbox at once when the caller aborts (the server shutting down)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const sut = await run(`abort-${MARKER}.sh`, "trap '' TERM\necho started\nsleep 1000\n", {
      timeoutMs: 20_000,
      signal: controller.signal,
    });
    // Killed by the abort, not by the 20 s time limit.
    expect(sut).toMatchObject({ timedOut: false, signal: 'SIGKILL', exitCode: null, output: 'started\n' });
    expect(await leftovers()).toEqual([]);
    const already = await run('never.sh', 'echo RAN\n', { signal: AbortSignal.abort() });
    expect(already).toMatchObject({ signal: 'SIGKILL', exitCode: null });
    expect(already.output).not.toContain('RAN');
  });

  it('cuts endless output at the cap with a notice, and stops the script at once', async () => {
    const sut = await run('flood.sh', 'while :; do echo "0123456789abcdef0123456789abcdef"; done\n', {
      maxOutputBytes: 100_000,
      timeoutMs: 20_000,
    });
    expect(sut).toMatchObject({ truncated: true, timedOut: false, signal: 'SIGKILL', exitCode: null });
    const [kept, notice] = [
      sut.output.slice(0, sut.output.lastIndexOf('\n[')),
      sut.output.slice(sut.output.lastIndexOf('\n[') + 1),
    ];
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(100_000);
    expect(Buffer.byteLength(kept)).toBeGreaterThan(99_900);
    expect(notice).toBe('[output cut at 100000 bytes; the script was stopped]');
  });

  it('cuts a flood that is not line-based at a character boundary', async () => {
    const sut = await run('flood.py', 'import sys\nwhile True:\n    sys.stdout.write("é" * 1000)\n', {
      maxOutputBytes: 10_001,
    });
    expect(sut.truncated).toBe(true);
    expect(sut.output).toBe(`${'é'.repeat(5000)}\n[output cut at 10001 bytes; the script was stopped]`);
  });

  it('contains a fork bomb: the process limit stops it, nothing is left behind, the machine still works', async () => {
    // Each level waits for the two it started, so the tree lives until the limit stops its growth;
    // without that wait the first levels could return, and the script end, before any fork failed.
    const sut = await run(`bomb-${MARKER}.sh`, 'bomb() { bomb | bomb & wait; }\nbomb\n', {
      maxProcesses: 16,
      timeoutMs: 2500,
    });
    // Usually the shell gives up at the limit ("Cannot fork", or "fork: retry: Resource temporarily
    // unavailable" while it retries); on a loaded machine the time limit may end it first.
    expect(/Cannot fork|Resource temporarily unavailable/.test(sut.output) || sut.timedOut).toBe(true);
    expect(await leftovers()).toEqual([]);
    const after = await run('after.sh', 'echo still fine\n');
    expect(after.output).toBe('still fine\n');
  });

  it('holds a fork bomb that never gives up at the process limit until the timeout ends it', async () => {
    const running = run(
      `bomb-${MARKER}.py`,
      'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n',
      { maxProcesses: 16, timeoutMs: 2000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // bwrap's own command line names the script too: count the script's processes only.
    const during = (await leftovers(`bomb-${MARKER}.py`)).filter((entry) => !entry.includes('bwrap'));
    const sut = await running;
    expect(during.length).toBeGreaterThanOrEqual(2);
    expect(during.length).toBeLessThanOrEqual(16);
    // Seen from the host, the script is not root even when the server is: RLIMIT_NPROC exempts root.
    expect(during.filter((entry) => entry.includes(' uid 0:'))).toEqual([]);
    expect(sut).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(await leftovers()).toEqual([]);
  });

  it('enforces the process limit: a script limited to 16 processes starts 15 more, then fork fails', async () => {
    const sut = await run(
      'count.py',
      [
        'import os, time',
        'n = 0',
        'try:',
        '    while n < 100:',
        '        if os.fork() == 0:',
        '            time.sleep(10)',
        '            os._exit(0)',
        '        n += 1',
        'except OSError as e:',
        '    print("forked", n, type(e).__name__)',
      ].join('\n'),
      { maxProcesses: 16 },
    );
    expect(sut.output).toBe('forked 15 BlockingIOError\n');
    expect(sut.timedOut).toBe(false);
  });

  it('stops a memory hog: 2 GB from Python (heap and shared mapping) and from node fail and are reported', async () => {
    const heap = await run('hog.py', 'b = bytearray(2 * 1024**3)\nprint("ALLOCATED", len(b))\n');
    expect(heap.exitCode).not.toBe(0);
    expect(heap.output).toContain('MemoryError');
    const shared = await run(
      'hog-shared.py',
      'import mmap\nm = mmap.mmap(-1, 2 * 1024**3)\nm[::4096] = b"x" * (2 * 1024**3 // 4096)\nprint("ALLOCATED")\n',
    );
    expect(shared.exitCode).not.toBe(0);
    expect(shared.output).not.toContain('ALLOCATED');
    const nodeHog = await run(
      'hog.js',
      'const a = []; for (let i = 0; i < 2048; i++) a.push(Buffer.alloc(1024 * 1024, 1)); ' +
        'console.log("ALLOCATED", a.length);\n',
    );
    expect(nodeHog.exitCode).not.toBe(0);
    expect(nodeHog.output).not.toContain('ALLOCATED');
  });

  it('bounds /tmp at the memory limit', async () => {
    const sut = await run(
      'fill.sh',
      'head -c 100000000 /dev/zero > /tmp/big; echo "exit $?"; ls -l /tmp/big | awk "{print \\$5}"\n',
      { memoryBytes: 32 * MB },
    );
    expect(sut.output).toContain('exit 1');
    expect(Number(sut.output.trim().split('\n').pop())).toBeLessThanOrEqual(32 * MB);
  });

  it('runs sandboxes side by side without sharing /tmp', async () => {
    const [a, b] = await Promise.all([
      run('a.sh', 'echo a > /tmp/mine; sleep 0.3; cat /tmp/mine\n'),
      run('b.sh', 'sleep 0.1; cat /tmp/mine 2>&1 || true; echo b > /tmp/mine\n'),
    ]);
    expect(a.output).toBe('a\n');
    expect(b.output).toContain('No such file');
  });

  it(
    'refuses, before running anything, a script outside the folder, missing, a directory, a FIFO, a native binary ' +
      'or a data file',
    async () => {
      expect((await refusal({ scriptPath: '../other/SKILL.md' })).code).toBe(ErrorCode.RESOURCE_OUTSIDE_SKILL);
      expect((await refusal({ scriptPath: '/etc/passwd' })).code).toBe(ErrorCode.RESOURCE_OUTSIDE_SKILL);
      const link = await refusal({ scriptPath: 'scripts/link-out.sh' });
      expect([link.code, link.message]).toEqual([
        ErrorCode.RESOURCE_OUTSIDE_SKILL,
        "Script 'scripts/link-out.sh' leads outside the skill folder (through a symbolic link); only files inside " +
          'the skill can be run.',
      ]);
      expect((await refusal({ scriptPath: 'scripts/missing.sh' })).code).toBe(ErrorCode.RESOURCE_NOT_FOUND);
      expect((await refusal({ scriptPath: 'scripts' })).code).toBe(ErrorCode.RESOURCE_IS_DIRECTORY);
      expect((await refusal({ scriptPath: 'scripts/fifo.sh' })).message).toContain('not a regular file');
      const native = await refusal({ scriptPath: 'scripts/native' });
      expect([native.code, native.message]).toEqual([
        ErrorCode.VALIDATION_FAILED,
        expect.stringContaining("Script 'scripts/native' cannot be run: it has no shebang and it has no extension"),
      ]);
      expect((await refusal({ scriptPath: 'data.txt' })).message).toContain(
        "its extension '.txt' is not one of .sh, .bash, .py, .js, .mjs, .cjs",
      );
    },
  );

  it('says to install bubblewrap when bwrap is missing', async () => {
    await expect(
      runSandboxed(
        {
          skillDir,
          scriptPath: 'scripts/echo.sh',
          args: [],
          timeoutMs: 1000,
          maxOutputBytes: 1000,
          memoryBytes: 64 * MB,
          maxProcesses: 4,
        },
        '/nonexistent/bwrap',
      ),
    ).rejects.toThrow(
      "bubblewrap is not installed ('/nonexistent/bwrap' was not found); install the Debian package bubblewrap.",
    );
    await expect(checkSandbox('/nonexistent/bwrap')).rejects.toThrow('install the Debian package bubblewrap');
  });

  it('dies with the server: killing the process that started bwrap kills the whole sandbox', async () => {
    const { options, command } = sandboxArgs(
      {
        skillDir,
        command: [
          '/bin/sh',
          '-c',
          `sh -c 'sleep 1000; :' ${MARKER}-orphan & sh -c 'sleep 1001; :' ${MARKER}-orphan; :`,
        ],
        env: SANDBOX_ENV,
        memoryBytes: 64 * MB,
        maxProcesses: 8,
        prlimit: '/usr/bin/prlimit',
        sh: '/bin/sh',
      },
      describeRuntime(),
    );
    const drop = process.getuid?.() === 0 ? `, uid: ${SANDBOX_UID}, gid: ${SANDBOX_UID}` : '';
    const server = spawn(
      process.execPath,
      [
        '-e',
        `require('child_process').spawn('bwrap', JSON.parse(process.argv[1]), { stdio: 'ignore'${drop} }); ` +
          `setInterval(() => {}, 1000);`,
        JSON.stringify([...options, '--', ...command]),
      ],
      { stdio: 'ignore' },
    );
    try {
      await waitFor(async () => (await leftovers(`${MARKER}-orphan`)).length >= 2, 5000);
    } finally {
      server.kill('SIGKILL');
    }
    // Gone at once on an idle machine; the wait is long only for a loaded one (CI).
    await waitFor(async () => (await leftovers(`${MARKER}-orphan`)).length === 0, 15_000);
    expect(await leftovers(`${MARKER}-orphan`)).toEqual([]);
  });
});

/** A stand-in for bwrap that fails the way bwrap does when it cannot set up: these run everywhere. */
describe('sandbox start-up failures (a fake bwrap)', () => {
  let tree: TempTree;
  const fakeBwrap = (name: string, message: string) => {
    const path = tree.write(`bin/${name}`, `#!/bin/sh\ncat >&2 <<'END'\n${message}\nEND\nexit 1\n`);
    chmodSync(path, 0o755);
    return path;
  };
  beforeAll(() => {
    tree = tempTree();
    tree.write('skills/tool/run.sh', 'echo hi\n');
    openToEveryone(tree.root);
  });
  afterAll(() => tree.cleanup());

  it('checkSandbox says in one line that namespaces are not permitted, and what to change', async () => {
    const bwrap = fakeBwrap(
      'no-userns',
      'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged ' +
        'user namespaces.',
    );
    const error = await checkSandbox(bwrap).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toBe(
      'bubblewrap cannot create the script sandbox here (bwrap: No permissions to create new namespace, likely ' +
        'because the kernel does not allow non-privileged user namespaces.); allow unprivileged user namespaces ' +
        '(sysctl user.max_user_namespaces > 0, kernel.apparmor_restrict_unprivileged_userns = 0, or a container ' +
        'profile that permits unshare), or disable script running.',
    );
    expect(error?.message).not.toContain('\n');
  });

  it('checkSandbox says when bubblewrap is too old for the flags the sandbox needs', async () => {
    const bwrap = fakeBwrap('old', 'bwrap: Unknown option --disable-userns');
    await expect(checkSandbox(bwrap)).rejects.toThrow(
      'bubblewrap is too old for the script sandbox (bwrap: Unknown option --disable-userns); install ' +
        'bubblewrap 0.8.0 or later (Debian 12 and later ship it).',
    );
  });

  it('runSandboxed throws when the sandbox cannot start, instead of reporting a script that failed', async () => {
    const bwrap = fakeBwrap('no-mount', "bwrap: Can't find source path /srv/skills/tool: Permission denied");
    const request: SandboxRequest = {
      skillDir: tree.path('skills/tool'),
      scriptPath: 'run.sh',
      args: [],
      timeoutMs: 5000,
      maxOutputBytes: 1000,
      memoryBytes: 64 * MB,
      maxProcesses: 4,
    };
    const hint = process.getuid?.() === 0 ? '; the server runs as root, so the sandbox starts as uid 65534' : '.';
    await expect(runSandboxed(request, bwrap)).rejects.toThrow(
      `The script sandbox could not start: bwrap: Can't find source path /srv/skills/tool: Permission denied${hint}`,
    );
  });
});

/** Host processes whose command line holds `marker` (this test's scripts put it in theirs), as `pid uid N: cmdline`. */
async function leftovers(marker = MARKER): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!cmdline.includes(marker) || Number(pid) === process.pid) continue;
      const uid = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)?.[1];
      found.push(`${pid} uid ${uid}: ${cmdline}`);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
