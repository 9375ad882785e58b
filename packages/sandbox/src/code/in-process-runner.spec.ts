import { describe, expect, it } from '@jest/globals';
import type { CodeSkillContext, CodeSkillOutput } from '@skillhost/core';
import { runInProcess, scoreInProcess } from './in-process-runner.js';

const request = (overrides: Partial<Parameters<typeof runInProcess>[1]> = {}) => ({
  ctx: { input: 'hello', userMessage: 'say hello', chatId: 'chat-9', config: { greeting: 'hi' } },
  timeoutMs: 2000,
  llm: async (prompt: string, options: { system?: string }) => `LLM(${prompt}|${options.system ?? '-'})`,
  callTool: async (name: string, args: unknown) => ({
    status: 'ok' as const,
    output: `${name} ${JSON.stringify(args)}`,
  }),
  ...overrides,
});

describe(runInProcess.name, () => {
  it('gives execute the same ctx a skill.mjs gets, and checks its result the same way', async () => {
    let seen: CodeSkillContext | undefined;
    const sut = await runInProcess(async (ctx) => {
      seen = ctx;
      const said = await ctx.llm.complete(`${ctx.config.greeting} ${ctx.input}`, { system: 'short' });
      const listed = await ctx.tools.call('skills.listResources', { name: 'pdf' });
      return { success: true, output: `${said}; ${listed.output}`, promptInjection: 'Mention the chat.' };
    }, request());
    expect(seen).toMatchObject({
      input: 'hello',
      userMessage: 'say hello',
      chatId: 'chat-9',
      config: { greeting: 'hi' },
    });
    expect(sut).toEqual({
      success: true,
      output: 'LLM(hi hello|short); skills.listResources {"name":"pdf"}',
      promptInjection: 'Mention the chat.',
      durationMs: expect.any(Number),
    });
  });

  it("hands the skill a copy of its settings, so it cannot change the server's", async () => {
    const settings = { greeting: 'hi' };
    await runInProcess(
      (ctx) => {
        ctx.config.greeting = 'changed';
        return { success: true, output: '' };
      },
      request({ ctx: { input: '', userMessage: '', chatId: 'c', config: settings } }),
    );
    expect(settings.greeting).toBe('hi');
  });

  it('turns a throw, a bad shape and a late answer into error results', async () => {
    expect(await runInProcess(() => Promise.reject(new RangeError('out of range')), request())).toMatchObject({
      success: false,
      error: 'The code skill failed: execute() threw RangeError: out of range',
    });
    expect(
      await runInProcess(() => {
        throw 'plain string';
      }, request()),
    ).toMatchObject({ success: false, error: 'The code skill failed: execute() threw plain string' });
    expect(await runInProcess(() => ({ ok: true }) as unknown as CodeSkillOutput, request())).toMatchObject({
      success: false,
      error: expect.stringMatching(/^execute\(\) returned an invalid result: 'success' must be true or false/),
    });
    expect(await runInProcess(() => new Promise(() => undefined), request({ timeoutMs: 50 }))).toMatchObject({
      success: false,
      error: 'The code skill failed: it did not finish within 50 ms (app.skills.code_timeout_ms)',
    });
  });
});

describe(scoreInProcess.name, () => {
  it('clamps the score and gives undefined for a throw, a non-number or a late answer', async () => {
    expect(await scoreInProcess((query) => (query.includes('weather') ? 0.8 : 0), 'weather today', 100)).toBe(0.8);
    expect(await scoreInProcess(async () => 4, 'x', 100)).toBe(1);
    expect(
      await scoreInProcess(
        () => {
          throw new Error('no');
        },
        'x',
        100,
      ),
    ).toBeUndefined();
    expect(await scoreInProcess(() => 'high' as unknown as number, 'x', 100)).toBeUndefined();
    expect(await scoreInProcess(() => new Promise<number>(() => undefined), 'x', 30)).toBeUndefined();
  });
});
