import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { AppError, ErrorCode, type SkillTool } from '@skillhost/core';
import type { ToolCard, ToolExecution } from '@skillhost/ai-sdk';
import { traceToolCall, traceTurn } from './turn-telemetry.js';

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => provider.register());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
});
beforeEach(() => exporter.reset());

const tool = (name: string) => ({ name }) as SkillTool;
/** The chat's pins and the catalogue's versions, by skill. */
const versions = (pinned: Record<string, string> = {}, current: Record<string, string> = {}) => ({
  pinned: (skill: string) => pinned[skill],
  current: (skill: string) => current[skill],
});
function execution(overrides: Partial<ToolExecution> = {}, card: Partial<ToolCard> = {}): ToolExecution {
  return {
    card: {
      id: 'call-1',
      tool: 'skills.readResource',
      args: {},
      status: 'ok',
      summary: { skill: 'pdf', truncated: false },
      output: 'FORMS',
      durationMs: 1,
      ...card,
    },
    ...overrides,
  } as ToolExecution;
}

describe(traceToolCall.name, () => {
  it('names the skill and the version the call activated', async () => {
    const run = async () =>
      execution(
        { activated: 'pdf', version: 'sha256:new' },
        { tool: 'skills.activate', summary: { skill: 'pdf', truncated: false } },
      );
    await traceToolCall(tool('skills.activate'), versions({ pdf: 'sha256:old' }, { pdf: 'sha256:now' }), run);
    const [span] = exporter.getFinishedSpans();
    expect(span.name).toBe('execute_tool skills.activate');
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'skills.activate',
      'gen_ai.tool.call.id': 'call-1',
      'skillhost.tool.status': 'ok',
      'skillhost.skill.name': 'pdf',
      'skillhost.skill.version': 'sha256:new',
    });
  });

  it("names the chat's pinned version for a call that read from a skill; no skill, no skill attributes", async () => {
    const pinned = versions({ pdf: 'sha256:pinned' }, { pdf: 'sha256:now' });
    await traceToolCall(tool('skills.readResource'), pinned, async () => execution());
    await traceToolCall(tool('skills.search'), pinned, async () =>
      execution({}, { tool: 'skills.search', status: 'error', summary: { skill: null, truncated: false } }),
    );
    const [read, search] = exporter.getFinishedSpans();
    expect(read.attributes['skillhost.skill.version']).toBe('sha256:pinned');
    expect(search.attributes['skillhost.skill.name']).toBeUndefined();
    expect(search.attributes['skillhost.skill.version']).toBeUndefined();
    // A tool's error card is a failed call.
    expect(search.status.code).toBe(2);
  });

  it("names the catalogue's version for a skill read without a pin, and for a code skill that ran", async () => {
    const catalogue = versions({ pdf: 'sha256:pinned' }, { pdf: 'sha256:now', 'echo-code': 'sha256:code' });
    await traceToolCall(tool('skills.readResource'), versions({}, { pdf: 'sha256:now' }), async () => execution());
    // A code skill's run activates it without a version: the code that ran is the catalogue's, whatever the pins.
    await traceToolCall(tool('use_skill'), catalogue, async () =>
      execution({ activated: 'echo-code' }, { tool: 'use_skill', summary: { skill: 'echo-code', truncated: false } }),
    );
    const [read, ran] = exporter.getFinishedSpans();
    expect(read.attributes['skillhost.skill.version']).toBe('sha256:now');
    expect(ran.attributes).toMatchObject({
      'skillhost.skill.name': 'echo-code',
      'skillhost.skill.version': 'sha256:code',
    });
  });
});

describe(traceTurn.name, () => {
  it('is the parent of what runs inside it, and records a failed turn with its error code', async () => {
    const result = await traceTurn({ chatId: 'c1', door: 'chat' }, undefined, async () => {
      await traceToolCall(tool('skills.readResource'), versions(), async () => execution());
      return { assistantMessage: { model: 'scripted' } };
    });
    expect(result.assistantMessage.model).toBe('scripted');
    const [toolSpan, turn] = exporter.getFinishedSpans();
    expect(turn.name).toBe('skillhost.turn');
    expect(toolSpan.parentSpanContext?.spanId).toBe(turn.spanContext().spanId);

    const failing = traceTurn({ chatId: 'c2', door: 'gateway' }, 'scripted', async () => {
      throw new AppError(ErrorCode.MODEL_ERROR, 'The model did not answer.');
    });
    await expect(failing).rejects.toThrow('The model did not answer.');
    const failed = exporter.getFinishedSpans()[2];
    expect(failed.attributes).toMatchObject({ 'skillhost.turn.door': 'gateway', 'error.type': 'MODEL_ERROR' });
    expect(failed.status).toEqual({ code: 2, message: 'MODEL_ERROR' });
  });
});
