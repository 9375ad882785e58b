import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { metrics, ProxyTracerProvider, trace } from '@opentelemetry/api';
import request from 'supertest';
import { TelemetryService } from '../../src/infra/observability/telemetry.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { freePort } from '../support/ports.js';

let tree: TempTree;
let receiver: OtlpReceiver;
let ctx: ChatTestContext | undefined;
beforeAll(async () => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
  tree.write('skills/pdf/references/forms.md', 'FORMS');
  receiver = await new OtlpReceiver().start();
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});
afterAll(async () => {
  await receiver.stop();
  tree.cleanup();
});

/** One turn through the chat API: the model activates `pdf`, reads one of its files, then answers. */
async function runTurn(app: ChatTestContext): Promise<{ chatId: string; body: Record<string, unknown> }> {
  const http = () => request(app.app.getHttpServer());
  const chat = await http().post('/v1/chats').send({}).expect(201);
  app.model.play(
    { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
    { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }] },
    { text: 'Done.' },
  );
  const turn = await http().post(`/v1/chats/${chat.body.id}/messages`).send({ content: 'Fill the form.' }).expect(201);
  return { chatId: chat.body.id as string, body: turn.body as Record<string, unknown> };
}

describe('OpenTelemetry off (no [app.telemetry] endpoint, the default)', () => {
  it('starts no SDK, registers nothing, and sends nothing while a turn runs', async () => {
    ctx = await startChatApp([tree.path('skills')]);
    expect(ctx.app.get(TelemetryService).enabled).toBe(false);
    const { body } = await runTurn(ctx);
    expect((body.assistantMessage as { content: string }).content).toBe('Done.');
    // The API's globals are its no-op ones: no SDK's tracer or meter provider was registered.
    expect((trace.getTracerProvider() as ProxyTracerProvider).getDelegate().constructor.name).toBe(
      'NoopTracerProvider',
    );
    expect(metrics.getMeterProvider().constructor.name).toBe('NoopMeterProvider');
    await ctx.closeApp();
    expect(receiver.requests).toEqual([]);
  });
});

describe('OpenTelemetry on ([app.telemetry] endpoint names a local OTLP/HTTP receiver)', () => {
  it(
    "exports a turn's spans, parented turn → model calls, tool calls (skill and version) → statements, and its " +
      'counters, flushed when the app closes',
    async () => {
      ctx = await startChatApp([tree.path('skills')], {
        'app.telemetry.endpoint': receiver.url,
        'app.telemetry.service_name': 'skillhost-test',
      });
      expect(ctx.app.get(TelemetryService).enabled).toBe(true);
      const { chatId, body } = await runTurn(ctx);
      const [activation] = body.activatedSkills as { name: string; version: string }[];
      expect(activation.name).toBe('pdf');
      expect(activation.version).toMatch(/^sha256:[0-9a-f]{64}$/);
      // Closing the app flushes the batch of spans and a last collection of the metrics.
      await ctx.closeApp();
      expect(new Set(receiver.requests.map((r) => `${r.path} ${r.contentType}`))).toEqual(
        new Set(['/v1/traces application/json', '/v1/metrics application/json']),
      );

      const turns = receiver.spans.filter((s) => s.name === 'skillhost.turn');
      expect(turns).toHaveLength(1);
      const [turn] = turns;
      expect(turn.parentSpanId).toBe('');
      expect(turn.resource['service.name']).toBe('skillhost-test');
      expect(turn.attributes).toEqual({
        'skillhost.chat.id': chatId,
        'skillhost.turn.door': 'chat',
        'gen_ai.request.model': 'scripted',
        'gen_ai.provider.name': 'openai-compatible',
        'skillhost.tool_style': 'skillhost',
      });
      const inTurn = receiver.spans.filter((s) => s.traceId === turn.traceId);
      const childrenOf = (parent: ReceivedSpan) => inTurn.filter((s) => s.parentSpanId === parent.spanId);

      // One span per request to the model: the three steps of the loop, each with the tokens the provider counted.
      const modelCalls = childrenOf(turn).filter((s) => s.name === 'chat scripted');
      expect(modelCalls).toHaveLength(3);
      for (const call of modelCalls)
        expect(call.attributes).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai-compatible',
          'gen_ai.request.model': 'scripted',
          'skillhost.model.id': 'scripted-1',
          'gen_ai.usage.input_tokens': 10,
          'gen_ai.usage.output_tokens': 5,
        });

      // The tool calls are the turn's children too, each naming its skill and that skill's version digest.
      const tools = childrenOf(turn).filter((s) => s.name.startsWith('execute_tool '));
      expect(
        tools.map((s) => [s.name, s.attributes['skillhost.skill.name'], s.attributes['skillhost.skill.version']]),
      ).toEqual(
        expect.arrayContaining([
          ['execute_tool skills.activate', 'pdf', activation.version],
          ['execute_tool skills.readResource', 'pdf', activation.version],
        ]),
      );
      expect(tools).toHaveLength(2);
      expect(tools[0].attributes).toMatchObject({
        'gen_ai.tool.name': 'skills.activate',
        'skillhost.tool.status': 'ok',
      });

      // Statements: the turn's read of the chat and its one write, under the turn; their SQL without the values.
      const statements = inTurn.filter((s) => s.attributes['db.system.name'] === 'postgresql');
      expect(statements.length).toBeGreaterThanOrEqual(2);
      for (const statement of statements) {
        expect(inTurn.map((s) => s.spanId)).toContain(statement.parentSpanId);
        expect(String(statement.attributes['db.query.text'])).not.toContain('Fill the form.');
      }
      expect(childrenOf(turn).filter((s) => statements.includes(s)).length).toBeGreaterThanOrEqual(2);
      // Nothing of the turn lost its parent: every span but the turn's hangs from a span of the same trace.
      for (const span of inTurn.filter((s) => s !== turn))
        expect(inTurn.map((s) => s.spanId)).toContain(span.parentSpanId);

      expect(receiver.sumOf('skillhost.turns', { model: 'scripted', outcome: 'ok' })).toBe(1);
      expect(receiver.sumOf('skillhost.tool.calls', { tool: 'skills.activate', skill: 'pdf', status: 'ok' })).toBe(1);
      expect(receiver.sumOf('skillhost.tool.calls', { tool: 'skills.readResource', skill: 'pdf', status: 'ok' })).toBe(
        1,
      );
      expect(receiver.sumOf('skillhost.model.calls', { 'gen_ai.request.model': 'scripted', outcome: 'ok' })).toBe(3);
      // Closed, the app left no SDK registered behind it.
      expect(metrics.getMeterProvider().constructor.name).toBe('NoopMeterProvider');
    },
  );
});

describe("OpenTelemetry on, a gateway request (the OpenAI-compatible door's turn)", () => {
  it('is a turn of its own, marked gateway, with its model call and its conversation', async () => {
    ctx = await startChatApp([tree.path('skills')], { 'app.telemetry.endpoint': receiver.url });
    receiver.spans.length = 0;
    ctx.model.play({ text: 'Hello from the model.' });
    const answer = await request(ctx.app.getHttpServer())
      .post('/openai/v1/chat/completions')
      .send({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] })
      .expect(200);
    expect(answer.body.choices[0].message.content).toBe('Hello from the model.');
    await ctx.closeApp();
    const [turn] = receiver.spans.filter((s) => s.name === 'skillhost.turn');
    expect(turn.attributes).toMatchObject({
      'skillhost.chat.id': answer.headers['x-skillhost-conversation'],
      'skillhost.turn.door': 'gateway',
      'gen_ai.request.model': 'scripted',
    });
    expect(receiver.spans.filter((s) => s.parentSpanId === turn.spanId).map((s) => s.name)).toContain('chat scripted');
  });
});

describe('OpenTelemetry on, the collector down', () => {
  it('answers turns as usual, warns that the export failed, and still closes', async () => {
    const warnings: { message: string; context: string | undefined }[] = [];
    const note = (message: unknown, context?: string) => warnings.push({ message: String(message), context });
    const logger = { log: () => undefined, error: note, warn: note, debug: () => undefined, verbose: () => undefined };
    ctx = await startChatApp(
      [tree.path('skills')],
      { 'app.telemetry.endpoint': `http://127.0.0.1:${await freePort()}` },
      undefined,
      {},
      logger,
    );
    const { body } = await runTurn(ctx);
    expect((body.assistantMessage as { content: string }).content).toBe('Done.');
    // Closing flushes: the spans' export is refused, and said so; closing does not wait for the exporters' retries.
    const closing = performance.now();
    await ctx.closeApp();
    expect(performance.now() - closing).toBeLessThan(5000);
    expect(warnings.filter((w) => w.context === 'Telemetry').map((w) => w.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/ECONNREFUSED|did not finish within 2000 ms/)]),
    );
  });
});
