import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { checkSandbox } from '@skillhost/sandbox';
import { SkillRegistryService } from '@skillhost/nest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * A hostile run at skill code: skills.runScript (special files, shebangs, huge or odd arguments,
 * floods, binary output, fork bombs, escapes, tricky allowed-tools, concurrency) and code skills
 * (hangs, huge or odd results, model and tool loops, process-level calls, special skill.mjs files,
 * name clashes, skill.mjs in a regular folder, odd tools_required). Every answer is checked by its
 * body; a 500 or a hang is a bug.
 */
const missing = await checkSandbox().then(
  () => undefined,
  (error: Error) => error.message,
);
const describeWithSandbox = missing === undefined ? describe : describe.skip;
if (missing !== undefined) console.warn(`SKIPPED running-skill-code hardening tests: ${missing}`);

const SECRET = 'HARDEN-SECRET-7f3a';
let socketServer: Server | undefined;

const markerWriter = (marker: string) =>
  `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport async ` +
  `function execute() { writeFileSync(${JSON.stringify(marker)}, 'ran'); return { success: true, output: ` +
  `'CODE-RAN' }; }\n`;

const tree = useSkillTree((t) => {
  // --- scripts ---
  writeSkill(t, 'skills', 'runner', {
    description: 'Runs hostile scripts.',
    extra: 'allowed-tools: Bash(sh:*) Bash(python3:*)',
  });
  t.write('skills/runner/scripts/args.sh', '#!/bin/sh\necho "argc=$#"; printf "stdin=%s\\n" "$(wc -c)"\n');
  t.write('skills/runner/scripts/empty.sh', '');
  t.write('skills/runner/scripts/perl.sh', '#!/usr/bin/perl\nprint "perl ran\\n";\n');
  t.write('skills/runner/scripts/evil.sh', '#!/tmp/evil\necho evil\n');
  t.write('skills/runner/scripts/env-s.sh', "#!/usr/bin/env -S sh -c 'cat /etc/shadow'\necho env-s ran\n");
  t.write(
    'skills/runner/scripts/flood.sh',
    '#!/bin/sh\nyes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 52428800\necho ' +
      'FLOOD-END\n',
  );
  t.write('skills/runner/scripts/binary.sh', "#!/bin/sh\nprintf 'A\\000B\\377\\376C\\355\\240\\200D\\n'\n");
  t.write(
    'skills/runner/scripts/forks.sh',
    '#!/bin/sh\ni=0\nwhile [ $i -lt 1000 ]; do sleep 31.77 2>/dev/null & i=$((i+1)); done\necho started; wait\n',
  );
  t.write(
    'skills/runner/scripts/escape.sh',
    [
      '#!/bin/sh',
      'unshare -r id 2>&1 | head -1',
      'unshare -m true 2>&1 | head -1; echo "unshare-m=$?"',
      'mount -t tmpfs none /tmp 2>&1 | head -1',
      'python3 -c \'import os\ntry:\n  os.setuid(0); print("SETUID-OK")\nexcept Exception as e: print("setuid:", e)\'',
      'echo "uid=$(id -u)"',
      'touch /skill/x 2>&1 | head -1; touch /x 2>&1 | head -1',
      'echo END',
    ].join('\n'),
  );
  t.write(
    'skills/runner/scripts/environ.sh',
    '#!/bin/sh\ncat /proc/1/environ 2>&1 | tr "\\000" "\\n"; cat /proc/self/environ 2>&1 | tr "\\000" "\\n"; ls ' +
      '/proc | head -20 | tr "\\n" " "; echo; echo END\n',
  );
  t.write(
    'skills/runner/scripts/procs.sh',
    '#!/bin/sh\nfor p in /proc/[0-9]*; do echo "${p#/proc/}: $(tr "\\000" " " < "$p/cmdline" 2>/dev/null) / ' +
      '$(tr "\\000" " " < "$p/environ" 2>/dev/null)"; done\necho "PATH=$PATH uid=$(id -u)"\necho END\n',
  );
  t.write(
    'skills/runner/scripts/net.py',
    'import socket, sys\nfor port in sys.argv[1:]:\n  try:\n    s = socket.create_connection(("127.0.0.1", ' +
      'int(port)), timeout=2); print("CONNECTED", port)\n  except Exception as e: print("refused", port, ' +
      'type(e).__name__)\n',
  );
  t.write('skills/runner/scripts/slow.sh', '#!/bin/sh\nsleep 1.5; echo "slow-$1"\n');
  symlinkSync('/etc/passwd', t.path('skills/runner/scripts/passwd.sh'));
  symlinkSync('../../other/scripts/x.sh', t.path('skills/runner/scripts/sibling.sh'));
  mkdirSync(t.path('skills/runner/scripts/dir.sh'), { recursive: true });
  execFileSync('mkfifo', [t.path('skills/runner/scripts/fifo.sh')]);
  writeSkill(t, 'skills', 'other', { description: 'A sibling skill.', extra: 'allowed-tools: Bash(sh:*)' });
  t.write('skills/other/scripts/x.sh', '#!/bin/sh\necho OTHER-X\n');

  // --- tricky allowed-tools ---
  writeSkill(t, 'skills', 'semi', {
    description: 'Semicolon in allowed-tools.',
    extra: 'allowed-tools: Bash(sh:*) ; rm -rf /',
  });
  t.write('skills/semi/scripts/x.sh', '#!/bin/sh\necho "SEMI-RAN $*"\n');
  t.write('skills/semi/scripts/x.py', 'print("SEMI-PY")\n');
  writeSkill(t, 'skills', 'dotdot', {
    description: 'Dot-dot in allowed-tools.',
    extra: 'allowed-tools: Bash(./scripts/../../other/x.sh:*)',
  });
  t.write('skills/dotdot/scripts/x.sh', '#!/bin/sh\necho DOTDOT-RAN\n');
  t.write('skills/dotdot/other/x.sh', '#!/bin/sh\necho DOTDOT-OTHER\n');
  writeSkill(t, 'skills', 'starlist', { description: 'Bash(*) in a YAML list.', extra: 'allowed-tools:\n  - Bash(*)' });
  t.write('skills/starlist/scripts/x.py', 'print("STAR-RAN")\n');
  writeSkill(t, 'skills', 'longval', {
    description: 'A very long allowed-tools.',
    extra: `allowed-tools: Bash(./scripts/${'a'.repeat(30_000)}:*) ${'Bash(x:*) '.repeat(2_500)}Bash(sh:*)`,
  });
  t.write('skills/longval/scripts/x.sh', '#!/bin/sh\necho LONG-RAN\n');

  // --- code skills ---
  const code = (name: string, source: string, description = `Code skill ${name}.`) => {
    writeSkill(t, 'code', name, { description });
    t.write(`code/${name}/skill.mjs`, source);
  };
  code('never', 'export async function execute() { await new Promise(() => {}); }\n');
  code(
    'huge',
    "export async function execute() { return { success: true, output: 'x'.repeat(100 * 1024 * 1024) }; }\n",
  );
  code(
    'circular',
    "export async function execute() { const m = { a: 1 }; m.self = m; return { success: true, output: 'circ', " +
      'metadata: m }; }\n',
  );
  code('nonobject', 'export async function execute() { return 42; }\n');
  code(
    'llm50',
    'export async function execute(ctx) { const got = []; for (let i = 0; i < 50; i++) { try { got.push(await ' +
      'ctx.llm.complete(`q${i}`)); } catch (e) { got.push(`ERR:${e.message}`); break; } } return { success: true, ' +
      'output: `calls=${got.length} last=${got.at(-1)}` }; }\n',
  );
  code(
    'callscript',
    "export async function execute(ctx) { const r = await ctx.tools.call('skills.runScript', { name: 'runner', " +
      "path: 'scripts/args.sh', args: ['a', 'b'] }); return { success: true, output: `status=${r.status} " +
      'out=${r.output}` }; }\n',
  );
  code(
    'garbage',
    [
      'export async function execute(ctx) {',
      '  const out = [];',
      '  const attempt = async (label, f) => { try { const r = await f(); ' +
        'out.push(`${label}:${r.status}:${String(r.output).slice(0, 160)}`); } catch (e) { ' +
        'out.push(`${label}:THROW:${String(e.message).slice(0, 160)}`); } };',
      "  await attempt('empty', () => ctx.tools.call('', {}));",
      "  await attempt('proto', () => ctx.tools.call('__proto__', {}));",
      "  await attempt('ctor', () => ctx.tools.call('constructor', {}));",
      "  await attempt('long', () => ctx.tools.call('x'.repeat(100000), {}));",
      "  await attempt('nullargs', () => ctx.tools.call('skills.readResource', null));",
      "  await attempt('numargs', () => ctx.tools.call('skills.readResource', 5));",
      "  await attempt('fnargs', () => ctx.tools.call('skills.readResource', { name: () => 1 }));",
      "  await attempt('nulargs', () => ctx.tools.call('skills.readResource', { name: 'run\\u0000ner', path: " +
        "'SKILL.md' }));",
      "  await attempt('protoargs', () => ctx.tools.call('skills.readResource', JSON.parse('{\"__proto__\": " +
        '{"polluted": 1}, "name": "runner", "path": "SKILL.md"}\')));',
      "  return { success: true, output: out.join('\\n') + `\\npolluted=${({}).polluted}` };",
      '}',
    ].join('\n'),
  );
  // Signal 0 only checks that a signal could be delivered: a real process.kill(process.pid) here ends the test run
  // itself.
  code(
    'circargs',
    "export async function execute(ctx) { const c = { name: 'runner', path: 'SKILL.md' }; c.self = c; const r = " +
      "await ctx.tools.call('skills.readResource', c); return { success: true, output: " +
      '`circ:${r.status}:${r.output.slice(0, 100)}` }; }\n',
  );
  code(
    'bigargs',
    "export async function execute(ctx) { const r = await ctx.tools.call('skills.readResource', { name: 10n }); " +
      'return { success: true, output: `big:${r.status}:${r.output.slice(0, 100)}` }; }\n',
  );
  code(
    'killer',
    'export async function execute() { let can; try { can = process.kill(process.pid, 0); } catch (e) { can = ' +
      'e.code; } return { success: true, output: `pid=${process.pid} canSignal=${can}` }; }\n',
  );
  code(
    'aborter',
    "export async function execute() { process.abort(); return { success: true, output: 'ABORT-RETURNED' }; }\n",
  );
  code(
    'execer',
    "import { execSync } from 'node:child_process';\nexport async function execute() { return { success: true, " +
      "output: `id: ${execSync('id').toString().trim()}` }; }\n",
  );
  writeSkill(t, 'code', 'fifo-mjs', { description: 'skill.mjs is a FIFO.' });
  execFileSync('mkfifo', [t.path('code/fifo-mjs/skill.mjs')]);
  writeSkill(t, 'code', 'dir-mjs', { description: 'skill.mjs is a folder.' });
  mkdirSync(t.path('code/dir-mjs/skill.mjs'));
  writeSkill(t, 'code', 'sock-mjs', { description: 'skill.mjs is a socket.' });
  // A clash: the regular skill must win and this code never run.
  writeSkill(t, 'skills', 'shadowed', { description: 'The regular one.', body: 'REGULAR-SHADOWED-BODY' });
  code('shadowed', markerWriter(t.path('marker-shadowed')), 'The code one.');
  // skill.mjs in a regular folder: a file, never run.
  writeSkill(t, 'skills', 'planted', { description: 'A regular skill with a skill.mjs.', body: 'PLANTED-BODY' });
  t.write('skills/planted/skill.mjs', markerWriter(t.path('marker-planted')));

  // --- odd tools_required ---
  const req = (name: string, extra: string) =>
    writeSkill(t, 'skills', name, { description: `tools_required ${name}.`, extra });
  req('tr-number', 'tools_required: 42');
  req('tr-empty', 'tools_required: ""');
  req('tr-nulls', 'tools_required: [null, 1]');
  req('tr-object', 'tools_required: {a: 1}');
  req('tr-proto', 'tools_required: __proto__ constructor');
  req('tr-bash-pattern', 'tools_required: "Bash(git:*), SHELL"');
  req('tr-json', 'metadata:\n  tools_required: \'["skills.activate", "nope-tool"]\'');
  req('tr-deep', `metadata:\n  tools_required: '${'['.repeat(5000)}${']'.repeat(5000)}'`);
  req('tr-long', `tools_required: ${'x'.repeat(30_000)}`);

  chmodSync(t.root, 0o755);
});

interface Card {
  tool: string;
  status: string;
  output: string;
  summary: Record<string, unknown>;
}

describeWithSandbox('hostile skill code: scripts and code skills with scripts on', () => {
  let ctx: ChatTestContext;
  const { http, newChat, useSkill } = chatCalls(() => ctx);
  const runScript = async (chat: string, body: unknown, status = 200) =>
    (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send(body as object)
        .expect(status)
    ).body;

  beforeAll(async () => {
    process.env.SKILLHOST_HARDEN_SECRET = SECRET;
    const sock = tree().path('code/sock-mjs/skill.mjs');
    socketServer = createServer();
    await new Promise<void>((resolve) => socketServer!.listen(sock, resolve));
    ctx = await startChatApp([tree().path('skills')], {
      'app.tools.style': 'use_skill',
      'app.scripts.enabled': true,
      'app.scripts.timeout_ms': 4000,
      'app.skills.code_directories': [tree().path('code')],
    });
  });
  afterAll(async () => {
    delete process.env.SKILLHOST_HARDEN_SECRET;
    await ctx?.close();
    await new Promise<void>((resolve) => (socketServer ? socketServer.close(() => resolve()) : resolve()));
  });

  describe('scripts: special files and shebangs', () => {
    it('a symlink to /etc/passwd or to a sibling skill is refused as outside the skill', async () => {
      const chat = await newChat();
      for (const path of ['scripts/passwd.sh', 'scripts/sibling.sh']) {
        const run = await runScript(chat, { name: 'runner', path });
        expect(run.toolCard).toMatchObject({
          status: 'error',
          output: expect.stringMatching(
            /^Error \(RESOURCE_OUTSIDE_SKILL\): Script '.*' leads outside the skill folder/,
          ),
        });
        expect(run.toolCard.output).not.toMatch(/root:|OTHER-X/);
      }
    });

    it('a directory and a FIFO are refused at once, as cards', async () => {
      const chat = await newChat();
      const dir = await runScript(chat, { name: 'runner', path: 'scripts/dir.sh' });
      expect(dir.toolCard).toMatchObject({
        status: 'error',
        output: expect.stringMatching(/^Error \(RESOURCE_IS_DIRECTORY\)/),
      });
      const fifo = await runScript(chat, { name: 'runner', path: 'scripts/fifo.sh' });
      expect(fifo.toolCard).toMatchObject({ status: 'error', output: expect.stringMatching(/not a regular file/) });
    });

    it('a 0-byte script runs and exits 0 with no output', async () => {
      const run = await runScript(await newChat(), { name: 'runner', path: 'scripts/empty.sh' });
      expect(run.toolCard).toMatchObject({ status: 'ok', summary: { command: 'sh scripts/empty.sh', exitCode: 0 } });
      expect(run.toolCard.output).toMatch(/^\$ sh scripts\/empty\.sh\n\[exit code 0, \d+ ms\]\n$/);
    });

    it('shebangs naming perl, /tmp/evil or env -S sh -c are refused with the reason', async () => {
      const chat = await newChat();
      const perl = await runScript(chat, { name: 'runner', path: 'scripts/perl.sh' });
      expect(perl.toolCard.output).toMatch(
        /^Error \(VALIDATION_FAILED\): .*its shebang names '\/usr\/bin\/perl', which is not an allowed interpreter/,
      );
      const evil = await runScript(chat, { name: 'runner', path: 'scripts/evil.sh' });
      expect(evil.toolCard.output).toMatch(/^Error \(VALIDATION_FAILED\): .*its shebang names '\/tmp\/evil'/);
      const envS = await runScript(chat, { name: 'runner', path: 'scripts/env-s.sh' });
      expect(envS.toolCard.output).toMatch(
        /^Error \(VALIDATION_FAILED\): .*only options starting with '-' may follow the interpreter/,
      );
      expect([perl, evil, envS].map((r) => r.toolCard.status)).toEqual(['error', 'error', 'error']);
    });
  });

  describe('scripts: arguments and stdin', () => {
    it('NUL, 65 args and non-string args are 400 VALIDATION_FAILED naming the problem', async () => {
      const chat = await newChat();
      expect((await runScript(chat, { name: 'runner', path: 'scripts/args.sh', args: ['a\u0000b'] }, 400)).code).toBe(
        'VALIDATION_FAILED',
      );
      expect(
        (
          await runScript(
            chat,
            { name: 'runner', path: 'scripts/args.sh', args: Array.from({ length: 65 }, () => 'a') },
            400,
          )
        ).details.problems,
      ).toEqual(["'args' must hold at most 64 arguments"]);
      const odd = await runScript(
        chat,
        { name: 'runner', path: 'scripts/args.sh', args: [1, null, { a: 1 }, ['x']] },
        400,
      );
      expect(odd).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: {
          problems: [
            "'args.0' must be a string",
            "'args.1' must be a string",
            "'args.2' must be a string",
            "'args.3' must be a string",
          ],
        },
      });
      const notList = await runScript(chat, { name: 'runner', path: 'scripts/args.sh', args: 'a b' }, 400);
      expect(notList).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: { problems: [expect.stringMatching(/args/)] },
      });
    });

    it(
      '10 MB of args is refused before the handler (413), and 64 args of 10,000 characters is a card naming the ' +
        'byte limit',
      async () => {
        const chat = await newChat();
        const huge = await http()
          .post(`/v1/chats/${chat}/tools/skills.runScript`)
          .send({
            name: 'runner',
            path: 'scripts/args.sh',
            args: Array.from({ length: 10 }, () => 'a'.repeat(1_000_000)),
          });
        expect(huge.status).toBe(413);
        expect(huge.body.code).toMatch(/PAYLOAD_TOO_LARGE|BODY_TOO_LARGE|TOO_LARGE/);
        const wide = await runScript(chat, {
          name: 'runner',
          path: 'scripts/args.sh',
          args: Array.from({ length: 64 }, () => 'a'.repeat(10_000)),
        });
        expect(wide.toolCard).toMatchObject({
          status: 'error',
          output: expect.stringMatching(
            /^Error \(VALIDATION_FAILED\): Script arguments total 640064 bytes, over the 65536-byte limit/,
          ),
        });
      },
    );

    it(
      'stdin just under the body limit reaches the script whole; 1,000,001 characters from the model is an error ' +
        'card',
      async () => {
        const chat = await newChat();
        const run = await runScript(chat, { name: 'runner', path: 'scripts/args.sh', stdin: 'z'.repeat(1_000_000) });
        expect(run.toolCard).toMatchObject({ status: 'ok' });
        expect(run.toolCard.output).toMatch(/argc=0\nstdin=1000000\n$/);
        ctx.model.play(
          {
            toolCalls: [
              {
                name: 'skills_runScript',
                arguments: { name: 'runner', path: 'scripts/args.sh', stdin: 'z'.repeat(1_000_001) },
              },
            ],
          },
          { text: 'too big' },
        );
        const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
        expect(turn.assistantMessage.toolCards[0]).toMatchObject({
          tool: 'skills.runScript',
          status: 'error',
          output: expect.stringMatching(/stdin.*at most 1000000 characters/),
        });
      },
    );
  });

  describe('scripts: output', () => {
    it('50 MB written quickly is cut at 1 MB, the script stopped fast, the card says cut', async () => {
      const chat = await newChat();
      const run = await runScript(chat, { name: 'runner', path: 'scripts/flood.sh' });
      expect(run.toolCard).toMatchObject({ summary: { truncated: true, timedOut: false } });
      expect(run.toolCard.output).toMatch(/\[output cut at 1000000 bytes; the script was stopped\]$/);
      expect(run.toolCard.output).toMatch(
        /^\$ sh scripts\/flood\.sh\n\[ended by signal SIGKILL, \d+ ms, output cut\]\n/,
      );
      expect(run.toolCard.output).not.toContain('FLOOD-END');
      expect(Buffer.byteLength(run.toolCard.output)).toBeLessThan(1_001_000);
    });

    it(
      'binary output (NUL, invalid UTF-8, a lone surrogate encoding) becomes a storable card through the model ' +
        'loop',
      async () => {
        const chat = await newChat();
        const direct = await runScript(chat, { name: 'runner', path: 'scripts/binary.sh' });
        expect(direct.toolCard.status).toBe('ok');
        expect(direct.toolCard.output).toMatch(/A.B.*C.*D\n$/s);
        ctx.model.play(
          { toolCalls: [{ name: 'skills_runScript', arguments: { name: 'runner', path: 'scripts/binary.sh' } }] },
          { text: 'binary seen' },
        );
        const res = await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' });
        expect(res.status).toBe(201);
        expect(res.body.assistantMessage.content).toBe('binary seen');
        const [row] = await query<{ out: string }>(
          ctx.db.url,
          "SELECT tool_cards->0->>'output' AS out FROM chat_messages WHERE chat_id = $1 AND role = 'assistant'",
          [chat],
        );
        expect(row.out).toMatch(/A.B.*D\n$/s);
        expect(row.out).not.toContain('\u0000');
      },
    );
  });

  describe('scripts: containment', () => {
    it(
      '1000 background sleepers stop at the process limit (sh exits on "Cannot fork"), and none is left after the ' +
        'run',
      async () => {
        const chat = await newChat();
        const run = await runScript(chat, { name: 'runner', path: 'scripts/forks.sh' });
        expect(run.toolCard).toMatchObject({ status: 'error', summary: { exitCode: 2, timedOut: false } });
        expect(run.toolCard.output).toMatch(/Cannot fork\n$/);
        expect(run.toolCard.output).not.toContain('started');
        await new Promise((resolve) => setTimeout(resolve, 300));
        const left = execFileSync('ps', ['-eo', 'args'])
          .toString()
          .split('\n')
          .filter((line) => line.includes('sleep 31.77'));
        expect(left).toEqual([]);
      },
    );

    it('unshare, mount and setuid fail; the script is nobody and cannot write outside /tmp', async () => {
      const run = await runScript(await newChat(), { name: 'runner', path: 'scripts/escape.sh' });
      expect(run.toolCard.output).toMatch(/uid=65534\n/);
      expect(run.toolCard.output).not.toMatch(/SETUID-OK|uid=0\(|uid=0\n/);
      expect(run.toolCard.output).toMatch(/setuid: \[Errno (1|22)\] (Operation not permitted|Invalid argument)/);
      expect(run.toolCard.output).toMatch(
        /unshare: unshare failed: (No space left on device|Operation not permitted)\n/,
      );
      expect(run.toolCard.output).toMatch(/mount: \/tmp: must be superuser/);
      expect(run.toolCard.output).toMatch(
        /cannot touch '\/skill\/x': Read-only file system\n.*cannot touch '\/x': Read-only file system/,
      );
      expect(run.toolCard.output).toMatch(/END\n$/);
      expect(existsSync(tree().path('skills/runner/x'))).toBe(false);
    });

    it("/proc/1/environ and /proc/self/environ hold only the sandbox's variables", async () => {
      const run = await runScript(await newChat(), { name: 'runner', path: 'scripts/environ.sh' });
      expect(run.toolCard.output).toMatch(/END\n$/);
      expect(run.toolCard.output).not.toContain(SECRET);
      expect(run.toolCard.output).not.toMatch(/DATABASE_URL|NODE_OPTIONS|JEST_WORKER/);
      expect(run.toolCard.output).toContain('PATH=/usr/local/bin:/usr/bin:/bin');
    });

    // Regression, fixed since this pass found it. Was: /proc/1/cmdline showed the sandbox's whole
    // bwrap command line (the skill's host path among it) and /proc/1/environ the server's PATH,
    // which named /root: the server ran as root.
    it(
      "/proc shows no host path, no server PATH and no host process: only bwrap's init and the " + "script's own",
      async () => {
        const run = await runScript(await newChat(), { name: 'runner', path: 'scripts/procs.sh' });
        const output = run.toolCard.output as string;
        expect(output).toMatch(/END\n$/);
        for (const host of [process.env.PATH ?? '', tree().root, '/root', process.cwd(), SECRET])
          expect(output).not.toContain(host);
        expect(output).toMatch(/^1: bwrap --args 3 -- \/usr\/bin\/prlimit .* \.\/scripts\/procs\.sh {2}\/ $/m);
        expect(output).toContain('\nPATH=/usr/local/bin:/usr/bin:/bin uid=65534\n');
        const pids = [...output.matchAll(/^(\d+): /gm)].map(([, pid]) => Number(pid));
        expect(pids.filter((pid) => pid > 20)).toEqual([]);
      },
    );

    it("cannot connect to the test's own HTTP servers on 127.0.0.1", async () => {
      const port = new URL(ctx.model.url).port;
      await ctx.app.listen(0, '127.0.0.1');
      const appPort = String(new URL(await ctx.app.getUrl()).port);
      const run = await runScript(await newChat(), {
        name: 'runner',
        path: 'scripts/net.py',
        args: [port, appPort, '5432'],
      });
      expect(run.toolCard.output).not.toContain('CONNECTED');
      expect(run.toolCard.output.match(/refused \d+ \w+/g)).toHaveLength(3);
    });

    it(
      'two turns running scripts concurrently both finish with their own output, in about the time ' + 'of one',
      async () => {
        const [a, b] = [await newChat(), await newChat()];
        ctx.model.answerWith((sent) => {
          const user = sent.body.messages.find((m) => m.role === 'user')?.content as string;
          return sent.body.messages.some((m) => m.role === 'tool')
            ? { text: `done ${user}` }
            : {
                toolCalls: [
                  { name: 'skills_runScript', arguments: { name: 'runner', path: 'scripts/slow.sh', args: [user] } },
                ],
              };
        });
        const [ra, rb] = await Promise.all([
          http().post(`/v1/chats/${a}/messages`).send({ content: 'AAA' }),
          http().post(`/v1/chats/${b}/messages`).send({ content: 'BBB' }),
        ]);
        expect([ra.status, rb.status]).toEqual([201, 201]);
        expect(ra.body.assistantMessage.toolCards[0].output).toMatch(/slow-AAA\n$/);
        expect(rb.body.assistantMessage.toolCards[0].output).toMatch(/slow-BBB\n$/);
        expect([ra.body.assistantMessage.content, rb.body.assistantMessage.content]).toEqual(['done AAA', 'done BBB']);
      },
    );
  });

  describe('scripts: tricky allowed-tools', () => {
    it("'Bash(sh:*) ; rm -rf /' allows sh scripts only, and runs nothing of the rest", async () => {
      const chat = await newChat();
      const sh = await runScript(chat, { name: 'semi', path: 'scripts/x.sh', args: [';', 'rm', '-rf', '/'] });
      expect(sh.toolCard).toMatchObject({ status: 'ok', summary: { exitCode: 0 } });
      expect(sh.toolCard.output).toMatch(/SEMI-RAN ; rm -rf \/\n$/);
      const py = await runScript(chat, { name: 'semi', path: 'scripts/x.py' });
      expect(py.toolCard.output).toMatch(/^Error \(SCRIPT_NOT_ALLOWED\)/);
    });

    it("'Bash(./scripts/../../other/x.sh:*)' allows neither scripts/x.sh nor anything out of the skill", async () => {
      const chat = await newChat();
      for (const path of ['scripts/x.sh', 'other/x.sh']) {
        const run = await runScript(chat, { name: 'dotdot', path });
        expect(run.toolCard.output).toMatch(/^Error \(SCRIPT_NOT_ALLOWED\)/);
      }
      const out = await runScript(chat, { name: 'dotdot', path: 'scripts/../../other/scripts/x.sh' });
      expect(out.toolCard.output).toMatch(/^Error \(RESOURCE_OUTSIDE_SKILL\)/);
    });

    it("'Bash(*)' in a YAML list allows any script", async () => {
      const run = await runScript(await newChat(), { name: 'starlist', path: 'scripts/x.py' });
      expect(run.toolCard).toMatchObject({ status: 'ok' });
      expect(run.toolCard.output).toMatch(/STAR-RAN\n$/);
    });

    it('a 55,000-character allowed-tools is parsed quickly and its Bash(sh:*) still applies', async () => {
      const run = await runScript(await newChat(), { name: 'longval', path: 'scripts/x.sh' });
      expect(run.toolCard.output).toMatch(/LONG-RAN\n$/);
    });
  });

  describe('code skills', () => {
    it('a 100 MB output is cut to 1 MB with a notice and stored', async () => {
      const chat = await newChat();
      const turn = await useSkill(chat, 'huge');
      const card = turn.assistantMessage.toolCards[0] as Card;
      expect(card.status).toBe('ok');
      expect(Buffer.byteLength(card.output)).toBeLessThan(1_100_000);
      expect(card.output).toMatch(/^# Skill: huge \(ran\)\n\nx{1000}/);
      const [row] = await query<{ n: number }>(
        ctx.db.url,
        "SELECT length(tool_cards->0->>'output')::int AS n FROM chat_messages WHERE chat_id = $1 AND role = " +
          "'assistant'",
        [chat],
      );
      expect(row.n).toBeLessThan(1_100_000);
    });

    it('circular metadata and a non-object are error cards saying what was wrong', async () => {
      const circ = await useSkill(await newChat(), 'circular');
      expect(circ.assistantMessage.toolCards[0]).toMatchObject({
        status: 'error',
        output: expect.stringMatching(/'metadata' must be plain JSON data/),
      });
      const num = await useSkill(await newChat(), 'nonobject');
      expect(num.assistantMessage.toolCards[0]).toMatchObject({
        status: 'error',
        output: expect.stringMatching(/expected an object, got number 42/),
      });
    });

    it('50 llm.complete calls in a loop are bounded', async () => {
      const chat = await newChat();
      let n = 0;
      ctx.model.answerWith((sent) => {
        n++;
        if (sent.body.tools !== undefined && !sent.body.messages.some((m) => m.role === 'tool'))
          return { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'llm50' } }] };
        return sent.body.tools === undefined ? { text: `A${n}` } : { text: 'looped' };
      });
      const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
      const card = turn.assistantMessage.toolCards[0] as Card;
      const completions = ctx.model.requests.filter((r) => r.body.tools === undefined).length;
      expect(card.output).toMatch(/calls=11 last=ERR:llm\.complete may be called at most 10 times in a turn$/);
      expect(completions).toBe(10);
    });

    it('ctx.tools.call skills.runScript runs the script while scripts are on, and is carded', async () => {
      const turn = await useSkill(await newChat(), 'callscript');
      const [used, ran] = turn.assistantMessage.toolCards as Card[];
      expect(used.output).toMatch(/status=ok out=\$ sh scripts\/args\.sh a b\n\[exit code 0, \d+ ms\]\nargc=2\n/);
      expect(ran).toMatchObject({ tool: 'skills.runScript', status: 'ok' });
    });

    it('ctx.tools.call with garbage names and arguments answers each with an error, pollutes nothing', async () => {
      const chat = await newChat();
      const turn = await useSkill(chat, 'garbage');
      const out = (turn.assistantMessage.toolCards[0] as Card).output;
      expect(turn.assistantMessage.toolCards[0].status).toBe('ok');
      for (const label of ['empty', 'proto', 'ctor', 'long'])
        expect(out).toMatch(new RegExp(`^${label}:error:Error \\(TOOL_NOT_FOUND\\)`, 'm'));
      for (const label of ['nullargs', 'numargs', 'nulargs', 'protoargs'])
        expect(out).toMatch(new RegExp(`^${label}:(error|THROW):`, 'm'));
      expect(out).toMatch(/^fnargs:THROW:The arguments cannot be passed to the server/m);
      expect(out).toMatch(/polluted=undefined$/);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      await http().get('/health/live').expect(200);
    });

    it('ctx.tools.call with circular arguments is an error card, not a 500', async () => {
      const turn = await useSkill(await newChat(), 'circargs');
      expect(turn.assistantMessage.toolCards[0].output).toMatch(/circ:error:/);
    });

    it('ctx.tools.call with a BigInt argument is an error answer, not a 500', async () => {
      const turn = await useSkill(await newChat(), 'bigargs');
      expect(turn.assistantMessage.toolCards[0].output).toMatch(/big:error:/);
    });

    it('process.kill(process.pid) in a code skill cannot signal the server', async () => {
      const turn = await useSkill(await newChat(), 'killer');
      const output = turn.assistantMessage.toolCards[0].output as string;
      await http().get('/health/live').expect(200);
      expect(output).toContain(`pid=${process.pid}`);
      expect(output).not.toMatch(/canSignal=true/);
    });

    it('process.abort() is an error card, the server lives', async () => {
      const turn = await useSkill(await newChat(), 'aborter');
      expect(turn.assistantMessage.toolCards[0]).toMatchObject({
        status: 'error',
        output: expect.stringMatching(/CODE_SKILL_FAILED.*process\.abort\(\) is not supported in workers/),
      });
      await http().get('/health/live').expect(200);
    });

    it('child_process.execSync is allowed (trusted code, server rights: reported)', async () => {
      const turn = await useSkill(await newChat(), 'execer');
      expect(turn.assistantMessage.toolCards[0]).toMatchObject({
        status: 'ok',
        output: expect.stringMatching(new RegExp(`id: uid=${process.getuid!()}\\(`)),
      });
    });

    it(
      'a FIFO, a folder or a socket named skill.mjs makes the skill invalid with the reason, without ' + 'hanging',
      async () => {
        const report = (await http().get('/v1/admin/skills').expect(200)).body;
        const invalid = Object.fromEntries(
          (report.invalid as { name?: string; path: string; errors: string[] }[]).map((entry) => [
            entry.path.split('/').pop(),
            entry.errors.join(' '),
          ]),
        );
        for (const name of ['fifo-mjs', 'dir-mjs', 'sock-mjs']) expect(invalid[name]).toMatch(/skill\.mjs/);
        const names = (report.valid as { name: string }[]).map((skill) => skill.name);
        expect(names).not.toEqual(expect.arrayContaining(['fifo-mjs']));
        expect(names).not.toContain('dir-mjs');
        expect(names).not.toContain('sock-mjs');
      },
    );

    it('a code skill named like a regular skill loses: the regular one is used and the code never runs', async () => {
      const turn = await useSkill(await newChat(), 'shadowed');
      expect(turn.assistantMessage.toolCards[0].output).toContain('REGULAR-SHADOWED-BODY');
      expect(turn.assistantMessage.toolCards[0].output).not.toContain('CODE-RAN');
      const report = (await http().get('/v1/admin/skills').expect(200)).body;
      expect(report.collisions).toContainEqual(
        expect.objectContaining({
          name: 'shadowed',
          winner: expect.objectContaining({ path: tree().path('skills/shadowed') }),
        }),
      );
      expect(existsSync(tree().path('marker-shadowed'))).toBe(false);
    });

    it(
      'skill.mjs in a regular skills folder never runs: activation shows the body, the file is served as a ' +
        'resource',
      async () => {
        const chat = await newChat();
        const turn = await useSkill(chat, 'planted');
        expect(turn.assistantMessage.toolCards[0].output).toContain('PLANTED-BODY');
        const read = (
          await http()
            .post(`/v1/chats/${chat}/tools/skills.readResource`)
            .send({ name: 'planted', path: 'skill.mjs' })
            .expect(200)
        ).body;
        expect(read.toolCard.output).toContain('writeFileSync');
        expect(existsSync(tree().path('marker-planted'))).toBe(false);
      },
    );

    it(
      'odd tools_required values: ignored with a warning, or the skill left out naming the tools; ' + 'never a 500',
      async () => {
        const report = (await http().get('/v1/admin/skills').expect(200)).body;
        const valid = new Map(
          (report.valid as { name: string; warnings: string[] }[]).map((skill) => [
            skill.name,
            skill.warnings.join(' '),
          ]),
        );
        const unavailable = new Map(
          (report.unavailable as { name: string; missingTools: string[] }[]).map((skill) => [
            skill.name,
            skill.missingTools,
          ]),
        );
        // The frontmatter's YAML reads scalars as text: 42 and [null, 1] name tools '42', 'null' and '1'.
        expect(unavailable.get('tr-number')).toEqual(['42']);
        expect(unavailable.get('tr-nulls')).toEqual(['null', '1']);
        expect(valid.get('tr-object')).toMatch(/tools_required/);
        expect(valid.get('tr-empty')).toMatch(/Unexpected fields in frontmatter: tools_required/);
        expect(valid.get('tr-bash-pattern')).toMatch(/Unexpected fields in frontmatter: tools_required/);
        expect(unavailable.get('tr-proto')).toEqual(['__proto__', 'constructor']);
        expect(unavailable.get('tr-json')).toEqual(['nope-tool']);
        expect(valid.get('tr-deep')).toMatch(/Field 'metadata\.tools_required' must be a list of tool names/);
        expect(unavailable.get('tr-long')?.[0]).toHaveLength(30_000);
      },
    );
  });
});

describeWithSandbox('a code skill calling skills.runScript with scripts off', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.tools.style': 'use_skill',
      'app.skills.code_directories': [tree().path('code')],
    });
  });
  afterAll(async () => ctx?.close());

  const { useSkill, newChat } = chatCalls(() => ctx);

  it('hears TOOL_NOT_FOUND and nothing runs', async () => {
    const turn = await useSkill(await newChat(), 'callscript', 'ok');
    expect(turn.assistantMessage.toolCards).toHaveLength(1);
    expect(turn.assistantMessage.toolCards[0].output).toMatch(
      /status=error out=Error \(TOOL_NOT_FOUND\): No tool 'skills\.runScript' in this chat\. Available: /,
    );
    expect(turn.assistantMessage.toolCards[0].output).not.toContain('argc=');
  });
});

/**
 * Code skills that never resolve, on an app of their own with a short time-out: the other apps keep the default one,
 * so a code skill that is merely slow to start on a busy machine is not cut.
 */
describe('code skills that never resolve', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.tools.style': 'use_skill',
      'app.skills.code_directories': [tree().path('code')],
      'app.skills.code_timeout_ms': 1000,
    });
  });
  afterAll(async () => ctx?.close());
  const { useSkill, newChat } = chatCalls(() => ctx);

  it('one that never resolves is stopped by the time-out', async () => {
    const turn = await useSkill(await newChat(), 'never');
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      status: 'error',
      output: expect.stringMatching(/^Error \(CODE_SKILL_FAILED\): Skill 'never' failed: .*1000 ms/),
    });
  });

  it('a programmatic code skill that never resolves is stopped by the time-out too', async () => {
    const registry = ctx.app.get(SkillRegistryService);
    registry.register(
      {
        name: 'prog-never',
        description: 'Never resolves, in-process.',
        instructions: 'x',
        execute: () => new Promise(() => {}),
      },
      'workspace',
    );
    try {
      const turn = await useSkill(await newChat(), 'prog-never');
      expect(turn.assistantMessage.toolCards[0]).toMatchObject({
        status: 'error',
        output: expect.stringMatching(/CODE_SKILL_FAILED.*1000 ms/),
      });
    } finally {
      registry.unregister('prog-never');
    }
  });
});

/** HTTP calls on the app `app()` holds once its `beforeAll` has run. */
function chatCalls(app: () => ChatTestContext) {
  const http = () => request(app().app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const useSkill = async (chat: string, name: string, text = 'Done.') => {
    app().model.play({ toolCalls: [{ name: 'use_skill', arguments: { skill_name: name, input: 'go' } }] }, { text });
    return (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
  };
  return { http, newChat, useSkill };
}
