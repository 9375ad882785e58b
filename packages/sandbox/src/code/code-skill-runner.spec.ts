import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tempTree, type TempTree } from '../../../../test/support/files/skill-tree.js';
import { runCodeSkill, scoreCodeSkill } from './code-skill-runner.js';
import type { CodeSkillRequest, CodeSkillToolOutcome } from '@skillhost/core';

/** Each module is a real `skill.mjs` file run in a real worker thread. */
const MODULES: Record<string, string> = {
  echo:
    `export async function execute(ctx) {
    return { success: true, output: 'echo: ' + ctx.input, metadata: { config: ctx.config, chatId: ctx.chatId, ` +
    `userMessage: ctx.userMessage } };
  }`,
  calls:
    `export async function execute(ctx) {
    const summary = await ctx.llm.complete('Summarise: ' + ctx.input, { system: 'Be brief.' });
    const plain = await ctx.llm.complete('No system prompt');
    const listed = await ctx.tools.call('skills.listResources', { name: 'pdf' });
    let refused;
    try { await ctx.tools.call('explode', {}); } catch (error) { refused = error.message; }
    return { success: true, output: summary + ' | ' + plain + ' | ' + listed.status + ':' + listed.output, ` +
    `metadata: { refused }, promptInjection: 'Answer in French.' };
  }`,
  throws: `export async function execute() { throw new TypeError('the input was not a date'); }`,
  'throws-later':
    `export async function execute() { setTimeout(() => { throw new RangeError('from a timer'); }, 0); return new ` +
    `Promise(() => {}); }`,
  loops: `export async function execute() { for (;;) {} }`,
  hangs: `export async function execute() { return new Promise(() => {}); }`,
  'top-level-loop': `for (;;) {}\nexport async function execute() { return { success: true, output: 'never' }; }`,
  hog:
    `export async function execute() { const kept = []; for (;;) kept.push({ text: 'x'.repeat(64) + kept.length, ` +
    `list: new Array(64).fill(kept.length) }); }`,
  exits: `export async function execute() { process.exit(1); }`,
  'exits-zero': `export async function execute() { process.exit(0); }`,
  'no-execute': `export const name = 'nothing to run';`,
  syntax: `export async function execute( { return 1 }`,
  'imports-missing':
    `import { help } from './helpers.mjs';\nexport async function execute() { return { success: true, output: ` +
    `help() }; }`,
  'returns-string': `export async function execute() { return 'just text'; }`,
  'returns-nothing': `export async function execute() {}`,
  'returns-bad-fields':
    `export async function execute() { return { success: 'yes', output: 42, error: 7, metadata: [1], ` +
    `promptInjection: {} }; }`,
  'returns-function':
    `export async function execute() { return { success: true, output: 'x', metadata: { fn: () => ` + `1 } }; }`,
  'returns-failure': `export async function execute() { return { success: false, error: 'no account configured' }; }`,
  'returns-huge': `export async function execute() { return { success: true, output: 'é'.repeat(600000) }; }`,
  'counts-imports':
    `globalThis.loaded = (globalThis.loaded ?? 0) + 1;\nexport async function execute() { return { success: true, ` +
    `output: String(globalThis.loaded) }; }`,
  'logs-a-lot':
    `export async function execute() { for (let i = 0; i < 2000; i++) console.log('noise '.repeat(50)); return { ` +
    `success: true, output: 'quiet' }; }`,
  'can-handle':
    `export function canHandle(query) { return query.includes('weather') ? 0.9 : 0.1; }\nexport async function ` +
    `execute() { return { success: true, output: '' }; }`,
  'can-handle-out-of-range': `export async function canHandle(query) { return query === 'low' ? -3 : 7; }`,
  'can-handle-throws': `export function canHandle() { throw new Error('cannot score'); }`,
  'can-handle-nan': `export function canHandle() { return 'high'; }`,
  'can-handle-loops': `export function canHandle() { for (;;) {} }`,
};

describe(runCodeSkill.name, () => {
  let tree: TempTree;
  const modulePath = (name: string) => tree.path(name, 'skill.mjs');

  beforeAll(() => {
    tree = tempTree();
    for (const [name, source] of Object.entries(MODULES)) tree.write(`${name}/skill.mjs`, source);
  });
  afterAll(() => tree.cleanup());

  function request(name: string, overrides: Partial<CodeSkillRequest> = {}): CodeSkillRequest {
    return {
      modulePath: modulePath(name),
      ctx: {
        input: 'hello',
        userMessage: 'please say hello',
        chatId: 'chat-1',
        config: { units: 'metric', nested: { depth: [1, 2] } },
      },
      timeoutMs: 5000,
      memoryMb: 64,
      llm: async () => 'unused',
      callTool: async () => ({ status: 'ok', output: 'unused' }),
      ...overrides,
    };
  }

  it('runs execute(ctx) with the input, the user message, the chat and its settings', async () => {
    const sut = await runCodeSkill(request('echo'));
    expect(sut).toEqual({
      success: true,
      output: 'echo: hello',
      metadata: {
        config: { units: 'metric', nested: { depth: [1, 2] } },
        chatId: 'chat-1',
        userMessage: 'please say hello',
      },
      durationMs: expect.any(Number),
    });
  });

  it(
    'relays ctx.llm.complete and ctx.tools.call to the functions it was given, and a rejection back ' + 'as a throw',
    async () => {
      const llmCalls: [string, { system?: string }][] = [];
      const toolCalls: [string, unknown][] = [];
      const sut = await runCodeSkill(
        request('calls', {
          llm: async (prompt, options) => {
            llmCalls.push([prompt, options]);
            return options.system === undefined ? 'PLAIN' : 'SUMMARY';
          },
          callTool: async (name, args): Promise<CodeSkillToolOutcome> => {
            toolCalls.push([name, args]);
            if (name === 'explode') throw new Error("Tool 'explode' is not offered");
            return { status: 'ok', output: 'references/forms.md' };
          },
        }),
      );
      expect(llmCalls).toEqual([
        ['Summarise: hello', { system: 'Be brief.' }],
        ['No system prompt', {}],
      ]);
      expect(toolCalls).toEqual([
        ['skills.listResources', { name: 'pdf' }],
        ['explode', {}],
      ]);
      expect(sut).toMatchObject({
        success: true,
        output: 'SUMMARY | PLAIN | ok:references/forms.md',
        metadata: { refused: "Tool 'explode' is not offered" },
        promptInjection: 'Answer in French.',
      });
    },
  );

  it.each([
    ['throws', 'The code skill failed: execute() threw TypeError: the input was not a date'],
    ['throws-later', 'The code skill failed: it crashed: RangeError: from a timer'],
    ['exits', 'The code skill failed: it exited (code 1) before returning a result'],
    ['exits-zero', 'The code skill failed: it exited (code 0) before returning a result'],
    [
      'no-execute',
      'The code skill failed: skill.mjs does not export a function execute(ctx); add `export async function ' +
        'execute(ctx) { … }`',
    ],
  ])('%s: ends as an error result, not a failure of the server', async (name, error) => {
    expect(await runCodeSkill(request(name))).toEqual({
      success: false,
      output: '',
      error,
      durationMs: expect.any(Number),
    });
  });

  it('reports a syntax error in skill.mjs', async () => {
    const sut = await runCodeSkill(request('syntax'));
    expect(sut).toMatchObject({
      success: false,
      error: expect.stringMatching(/^The code skill failed: skill.mjs could not be loaded: SyntaxError: /),
    });
  });

  it(
    'reports a skill.mjs that is gone, or that imports a file that is, naming paths relative to the ' + 'skill',
    async () => {
      expect(await runCodeSkill(request('missing'))).toMatchObject({
        success: false,
        error:
          'The code skill failed: skill.mjs is no longer there (moved or deleted since the last scan); reload ' +
          'the skills',
      });
      const sut = await runCodeSkill(request('imports-missing'));
      expect(sut.error).toBe(
        "The code skill failed: skill.mjs could not be loaded: Error: Cannot find module './helpers.mjs' imported " +
          'from ./skill.mjs',
      );
      expect(sut.error).not.toContain(tree.root);
    },
  );

  it.each(['loops', 'hangs', 'top-level-loop'])('%s: stopped by the timeout, and the next run works', async (name) => {
    const sut = await runCodeSkill(request(name, { timeoutMs: 300 }));
    expect(sut).toEqual({
      success: false,
      output: '',
      error: 'The code skill failed: it was stopped after 300 ms (app.skills.code_timeout_ms)',
      durationMs: expect.any(Number),
    });
    expect(await runCodeSkill(request('echo'))).toMatchObject({ success: true, output: 'echo: hello' });
  });

  it('a timed-out run ignores answers that arrive after it ended', async () => {
    let answered!: () => void;
    // Waited for, not timed: on a loaded machine the call may start well after the run did.
    const lateAnswer = new Promise<void>((resolve) => (answered = resolve));
    const sut = await runCodeSkill(
      request('calls', {
        // Long enough for a worker to start and call on a loaded machine.
        timeoutMs: 1000,
        llm: () =>
          new Promise((resolve) =>
            setTimeout(() => {
              resolve('late');
              answered();
            }, 1500),
          ),
      }),
    );
    expect(sut.error).toBe('The code skill failed: it was stopped after 1000 ms (app.skills.code_timeout_ms)');
    await lateAnswer;
    // The late answer went to a run that had ended: it changed nothing, and the next run works.
    expect(await runCodeSkill(request('echo'))).toMatchObject({ success: true, output: 'echo: hello' });
  });

  it('stops a skill that allocates past its memory limit, and the next run works', async () => {
    const sut = await runCodeSkill(request('hog', { memoryMb: 32, timeoutMs: 20_000 }));
    expect(sut).toEqual({
      success: false,
      output: '',
      error: 'The code skill failed: it ran out of memory (its limit is 32 MB, app.skills.code_memory_mb)',
      durationMs: expect.any(Number),
    });
    expect(await runCodeSkill(request('echo'))).toMatchObject({ success: true });
  });

  it.each([
    ['returns-string', 'execute() returned an invalid result: expected an object, got a string.'],
    ['returns-nothing', 'execute() returned an invalid result: expected an object, got nothing.'],
    [
      'returns-bad-fields',
      "execute() returned an invalid result: 'success' must be true or false (got a string); 'output' must be a " +
        "string (got number 42); 'error' must be a string when given (got number 7); 'promptInjection' must be a " +
        "string when given (got an object); 'metadata' must be an object when given (got an array).",
    ],
  ])('%s: a result of the wrong shape is an error that says what to return', async (name, error) => {
    const sut = await runCodeSkill(request(name));
    expect(sut).toEqual({
      success: false,
      output: '',
      error: `${error} Return { success: true, output: "…" } (optional: error, metadata, promptInjection).`,
      durationMs: expect.any(Number),
    });
  });

  it('a result that cannot leave the worker (a function inside) is an error', async () => {
    const sut = await runCodeSkill(request('returns-function'));
    expect(sut).toMatchObject({
      success: false,
      error: expect.stringMatching(
        new RegExp(
          '^The code skill failed: it returned a value that cannot be passed back \\(functions and ' +
            'symbols cannot; return plain data\\): DataCloneError',
        ),
      ),
    });
  });

  it('a failure may give only its error', async () => {
    expect(await runCodeSkill(request('returns-failure'))).toEqual({
      success: false,
      output: '',
      error: 'no account configured',
      durationMs: expect.any(Number),
    });
  });

  it('cuts an output past 1 MB with a notice, never inside a character', async () => {
    const sut = await runCodeSkill(request('returns-huge'));
    const [kept, notice] = sut.output.split('\n\n');
    expect(kept).toBe('é'.repeat(500_000));
    expect(notice).toBe('[Truncated: showing the first 1000000 of 1200000 bytes of the output.]');
  });

  it('imports skill.mjs afresh on every run', async () => {
    expect((await runCodeSkill(request('counts-imports'))).output).toBe('1');
    expect((await runCodeSkill(request('counts-imports'))).output).toBe('1');
  });

  it("drops the code's console output instead of writing it into the server's logs", async () => {
    expect(await runCodeSkill(request('logs-a-lot'))).toMatchObject({ success: true, output: 'quiet' });
  });
});

describe(scoreCodeSkill.name, () => {
  let tree: TempTree;
  const modulePath = (name: string) => tree.path(name, 'skill.mjs');

  beforeAll(() => {
    tree = tempTree();
    for (const [name, source] of Object.entries(MODULES)) tree.write(`${name}/skill.mjs`, source);
  });
  afterAll(() => tree.cleanup());

  it("returns canHandle(query)'s score", async () => {
    expect(await scoreCodeSkill(modulePath('can-handle'), "what's the weather in Oslo", 5000)).toBe(0.9);
    expect(await scoreCodeSkill(modulePath('can-handle'), 'write a poem', 5000)).toBe(0.1);
  });

  it('clamps a score outside 0..1, and awaits an async canHandle', async () => {
    expect(await scoreCodeSkill(modulePath('can-handle-out-of-range'), 'low', 5000)).toBe(0);
    expect(await scoreCodeSkill(modulePath('can-handle-out-of-range'), 'high', 5000)).toBe(1);
  });

  it.each([
    ['no canHandle', 'echo'],
    ['a throwing canHandle', 'can-handle-throws'],
    ['a score that is not a number', 'can-handle-nan'],
    ['a missing module', 'missing'],
  ])('is undefined for %s', async (_, name) => {
    expect(await scoreCodeSkill(modulePath(name), 'anything', 5000)).toBeUndefined();
  });

  it('is undefined when canHandle runs past the timeout', async () => {
    expect(await scoreCodeSkill(modulePath('can-handle-loops'), 'anything', 200)).toBeUndefined();
  });
});
