import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { AppError, defineTool, ErrorCode, readsSkills, type ToolContext } from '@skillhost/core';
import { runSkillTool, serverCallMessages } from './run-tool.js';

const context = {} as ToolContext;
const echo = (
  execute: (input: { name: string }) => Promise<{
    output: string;
    summary: { skill: string | null; truncated: boolean };
    failed?: boolean;
    activated?: string;
  }>,
) =>
  defineTool({
    name: 'skills.echo',
    wireName: 'skills_echo',
    description: 'Echo.',
    input: z.strictObject({ name: z.string() }),
    example: '{"name": "<skill>"}',
    annotations: readsSkills('Echo'),
    execute,
  });

describe(runSkillTool.name, () => {
  it('an answer is an ok card with the output, the summary and the call id; an activation is reported', async () => {
    const lines: string[] = [];
    const sut = await runSkillTool(
      echo(async ({ name }) => ({
        output: `hello ${name}`,
        summary: { skill: name, truncated: false },
        activated: name,
      })),
      { name: 'pdf' },
      context,
      { id: 'call-1', log: (l) => lines.push(l) },
    );
    expect(sut).toMatchObject({
      activated: 'pdf',
      card: {
        id: 'call-1',
        tool: 'skills.echo',
        args: { name: 'pdf' },
        status: 'ok',
        output: 'hello pdf',
        summary: { skill: 'pdf', truncated: false },
      },
    });
    expect(sut.card.durationMs).toBeGreaterThanOrEqual(0);
    expect(lines).toEqual(['skills.echo pdf']);
  });

  it('bad arguments never reach execute: an error card that ends with a call that works', async () => {
    let ran = false;
    const tool = echo(async () => {
      ran = true;
      return { output: '', summary: { skill: null, truncated: false } };
    });
    expect((await runSkillTool(tool, { nme: 'pdf' }, context)).card).toMatchObject({
      status: 'error',
      output: expect.stringMatching(/^Invalid arguments for skills.echo: .*Expected \{"name": "<skill>"\}\.$/),
      summary: { skill: null },
    });
    expect((await runSkillTool(tool, null, context)).card).toMatchObject({
      status: 'error',
      args: null,
      output: 'Arguments must be a JSON object like {"name": "<skill>"}.',
    });
    expect(ran).toBe(false);
  });

  it('a domain error is an error card with its code, naming what was asked; any other error is thrown', async () => {
    const refusing = echo(async () => {
      throw new AppError(ErrorCode.SKILL_NOT_FOUND, "Skill 'pdf' not found.");
    });
    expect((await runSkillTool(refusing, { name: 'pdf' }, context)).card).toMatchObject({
      status: 'error',
      output: "Error (SKILL_NOT_FOUND): Skill 'pdf' not found.",
      summary: { skill: 'pdf', truncated: false },
    });
    const broken = echo(async () => {
      throw new Error('bug');
    });
    await expect(runSkillTool(broken, { name: 'pdf' }, context)).rejects.toThrow('bug');
  });

  it('a call that ran and failed (a script exit code) is an error card with its output', async () => {
    const sut = await runSkillTool(
      echo(async () => ({ output: 'exit 2', summary: { skill: 'pdf', truncated: false }, failed: true })),
      { name: 'pdf' },
      context,
    );
    expect(sut.card).toMatchObject({ status: 'error', output: 'exit 2' });
  });
});

describe(serverCallMessages.name, () => {
  it("is the model's history of the call: its tool call, then the card's output as the result", () => {
    const card = {
      id: 'c1',
      tool: 'skills.activate',
      args: { name: 'pdf' },
      status: 'ok' as const,
      summary: { skill: 'pdf', truncated: false },
      output: 'BODY',
      durationMs: 1,
    };
    expect(serverCallMessages(card, 'skills_activate', { name: 'pdf' })).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'skills_activate', input: { name: 'pdf' } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'skills_activate',
            output: { type: 'text', value: 'BODY' },
          },
        ],
      },
    ]);
  });
});
