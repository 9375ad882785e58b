import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { metrics, ProxyTracerProvider, trace } from '@opentelemetry/api';
import { SkillRegistryService } from '@skillhost/nest';
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
  // A code skill run in a worker: it asks the chat's model, and calls a tool of the chat.
  writeSkill(tree, 'code', 'echo-code', { description: 'Echoes what it is given, summarised.' });
  tree.write(
    'code/echo-code/skill.mjs',
    [
      'export async function execute(ctx) {',
      "  const summary = await ctx.llm.complete(`Summarise: ${ctx.input}`, { system: 'Be brief.' });",
      "  const listed = await ctx.tools.call('skills.listResources', { name: 'pdf' });",
      '  return { success: true, output: `llm=${summary}; tool=${listed.status}` };',
      '}',
    ].join('\n'),
  );
  receiver = await new OtlpReceiver().start();
});
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
  receiver.reset();
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

describe('OpenTelemetry on, a hosted collector that wants headers', () => {
  it(
    "sends [app.telemetry] headers, headers_env's values from the environment, and OTEL_EXPORTER_OTLP_HEADERS' under " +
      'them, with every export; logs the names, never the values',
    async () => {
      const lines: string[] = [];
      const note = (message: unknown) => lines.push(String(message));
      const logger = { log: note, error: note, warn: note, debug: () => undefined, verbose: () => undefined };
      // The SDK reads OpenTelemetry's variables from the process's environment itself.
      process.env.OTEL_EXPORTER_OTLP_HEADERS = 'x-from-otel=otel%20value,x-scope-orgid=from-otel';
      try {
        ctx = await startChatApp(
          [tree.path('skills')],
          {
            'app.telemetry.endpoint': receiver.url,
            'app.telemetry.headers': { 'X-Scope-OrgID': 'team-a' },
            'app.telemetry.headers_env': { 'x-honeycomb-team': 'TEST_COLLECTOR_KEY' },
          },
          undefined,
          { TEST_COLLECTOR_KEY: 'collector-secret-7f3a' },
          logger,
        );
      } finally {
        delete process.env.OTEL_EXPORTER_OTLP_HEADERS;
      }
      await runTurn(ctx);
      await ctx.closeApp();
      expect(new Set(receiver.requests.map((r) => r.path))).toEqual(new Set(['/v1/traces', '/v1/metrics']));
      for (const { headers } of receiver.requests)
        expect(headers).toMatchObject({
          'x-honeycomb-team': 'collector-secret-7f3a',
          // Named by both, the header is Skillhost's configuration's.
          'x-scope-orgid': 'team-a',
          'x-from-otel': 'otel value',
        });
      expect(lines).toContain(
        `Exporting traces (100% of the turns) and metrics over OTLP/HTTP to ${new URL(receiver.url).host} with the ` +
          'headers X-Scope-OrgID, x-honeycomb-team',
      );
      expect(lines.join('\n')).not.toContain('collector-secret-7f3a');
    },
  );

  it(
    'with a key the collector refuses (401), answers turns as usual and warns that the export was ' + 'refused',
    async () => {
      receiver.requireHeader('x-honeycomb-team', 'the-right-key');
      const warnings: string[] = [];
      const note = (message: unknown, context?: string) => {
        if (context === 'Telemetry') warnings.push(String(message));
      };
      const logger = {
        log: () => undefined,
        error: note,
        warn: note,
        debug: () => undefined,
        verbose: () => undefined,
      };
      ctx = await startChatApp(
        [tree.path('skills')],
        { 'app.telemetry.endpoint': receiver.url, 'app.telemetry.headers_env': { 'x-honeycomb-team': 'TEST_KEY' } },
        undefined,
        { TEST_KEY: 'a-wrong-key' },
        logger,
      );
      const { body } = await runTurn(ctx);
      expect((body.assistantMessage as { content: string }).content).toBe('Done.');
      await ctx.closeApp();
      expect(receiver.requests.map((r) => r.headers['x-honeycomb-team'])).toContain('a-wrong-key');
      expect(receiver.spans).toEqual([]);
      // Said in a line each, without the SDK's stack, and without the key.
      expect(warnings).toEqual(
        expect.arrayContaining([
          'The last spans could not be sent: Unauthorized; they are dropped',
          'PeriodicExportingMetricReader: metrics export failed (error OTLPExporterError: Unauthorized)',
        ]),
      );
      expect(warnings.join('\n')).not.toContain('a-wrong-key');
    },
  );

  it('turns on with OTEL_EXPORTER_OTLP_ENDPOINT when [app.telemetry] names no endpoint', async () => {
    ctx = await startChatApp([tree.path('skills')], {}, undefined, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'skillhost-otel-env',
    });
    expect(ctx.app.get(TelemetryService).enabled).toBe(true);
    await runTurn(ctx);
    await ctx.closeApp();
    const [turn] = receiver.spans.filter((s) => s.name === 'skillhost.turn');
    expect(turn.resource['service.name']).toBe('skillhost-otel-env');
  });
});

describe('OpenTelemetry on, sampling', () => {
  it('at 0 exports no span of any turn, while the metrics still count every turn', async () => {
    ctx = await startChatApp([tree.path('skills')], {
      'app.telemetry.endpoint': receiver.url,
      'app.telemetry.sample_ratio': 0,
    });
    await runTurn(ctx);
    await runTurn(ctx);
    await ctx.closeApp();
    expect(receiver.spans).toEqual([]);
    expect(receiver.requests.map((r) => r.path)).toContain('/v1/metrics');
    expect(receiver.sumOf('skillhost.turns', { model: 'scripted', outcome: 'ok' })).toBe(2);
    expect(receiver.sumOf('skillhost.tool.calls', { tool: 'skills.activate', skill: 'pdf', status: 'ok' })).toBe(2);
    expect(receiver.sumOf('skillhost.model.calls', { 'gen_ai.request.model': 'scripted', outcome: 'ok' })).toBe(6);
  });

  it(
    "at 0.5 keeps some turns' traces, each whole (model calls, tool calls, statements), and drops " +
      'the others whole',
    async () => {
      ctx = await startChatApp([tree.path('skills')], {
        'app.telemetry.endpoint': receiver.url,
        'app.telemetry.sample_ratio': 0.5,
      });
      const turns = 16;
      for (let i = 0; i < turns; i++) await runTurn(ctx);
      await ctx.closeApp();
      const kept = receiver.spans.filter((s) => s.name === 'skillhost.turn');
      // Each turn is kept with a chance of one half: all 16 kept, or none, would be a 1 in 32,768 draw.
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(turns);
      for (const turn of kept) {
        const inTurn = receiver.spans.filter((s) => s.traceId === turn.traceId);
        expect(inTurn.filter((s) => s.name === 'chat scripted')).toHaveLength(3);
        expect(inTurn.filter((s) => s.name.startsWith('execute_tool '))).toHaveLength(2);
        expect(inTurn.some((s) => s.attributes['db.system.name'] === 'postgresql')).toBe(true);
      }
      // No span of a dropped turn: every span exported belongs to a kept turn's trace.
      const keptTraces = new Set(kept.map((s) => s.traceId));
      expect(receiver.spans.filter((s) => !keptTraces.has(s.traceId))).toEqual([]);
      expect(receiver.sumOf('skillhost.turns', { model: 'scripted', outcome: 'ok' })).toBe(turns);
    },
  );
});

describe("OpenTelemetry on, a caller's traceparent", () => {
  const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
  const PARENT = '00f067aa0ba902b7';
  /** A turn sent with the caller's W3C trace context: `sampled` its flag. */
  async function tracedTurn(app: ChatTestContext, sampled: boolean): Promise<void> {
    const http = () => request(app.app.getHttpServer());
    const chat = await http().post('/v1/chats').send({}).expect(201);
    app.model.play({ text: 'Done.' });
    await http()
      .post(`/v1/chats/${chat.body.id}/messages`)
      .set('traceparent', `00-${TRACE_ID}-${PARENT}-${sampled ? '01' : '00'}`)
      .send({ content: 'Hello.' })
      .expect(201);
  }

  it('is ignored by default: the turn starts a trace of its own, and an unsampled flag drops nothing', async () => {
    ctx = await startChatApp([tree.path('skills')], { 'app.telemetry.endpoint': receiver.url });
    await tracedTurn(ctx, false);
    await ctx.closeApp();
    const [turn] = receiver.spans.filter((s) => s.name === 'skillhost.turn');
    expect(turn.traceId).not.toBe(TRACE_ID);
    expect(turn.parentSpanId).toBe('');
  });

  it(
    "with accept_trace_context, makes the turn a child of the caller's span, and follows its sampled " + 'flag',
    async () => {
      ctx = await startChatApp([tree.path('skills')], {
        'app.telemetry.endpoint': receiver.url,
        'app.telemetry.accept_trace_context': true,
      });
      await tracedTurn(ctx, true);
      await tracedTurn(ctx, false);
      await ctx.closeApp();
      const turns = receiver.spans.filter((s) => s.name === 'skillhost.turn');
      expect(turns).toHaveLength(1);
      expect(turns[0]).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT });
      const model = receiver.spans.filter((s) => s.name === 'chat scripted');
      expect(model).toEqual([expect.objectContaining({ traceId: TRACE_ID, parentSpanId: turns[0].spanId })]);
    },
  );
});

describe('OpenTelemetry on, a code skill run in a worker', () => {
  const codeSkillApp = () =>
    startChatApp([tree.path('skills')], {
      'app.telemetry.endpoint': receiver.url,
      'app.tools.style': 'use_skill',
      'app.skills.code_directories': [tree.path('code')],
    });

  /** The spans of the one turn exported, with a way to find a span's children. */
  function theTurn() {
    const [turn] = receiver.spans.filter((s) => s.name === 'skillhost.turn');
    const inTurn = receiver.spans.filter((s) => s.traceId === turn.traceId);
    const childrenOf = (parent: ReceivedSpan) => inTurn.filter((s) => s.parentSpanId === parent.spanId);
    return { turn, inTurn, childrenOf };
  }

  it(
    "is the turn's tool call, with the skill and its code's version; the calls its code makes (the model, a tool) " +
      'are its children',
    async () => {
      ctx = await codeSkillApp();
      const digestOf = (name: string) => ctx!.app.get(SkillRegistryService).get(name)!.digest;
      const chat = await request(ctx.app.getHttpServer()).post('/v1/chats').send({}).expect(201);
      ctx.model.play(
        { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'echo-code', input: 'hello' } }] },
        { text: 'SUMMARY' },
        { text: 'Fini.' },
      );
      const answer = await request(ctx.app.getHttpServer())
        .post(`/v1/chats/${chat.body.id}/messages`)
        .send({ content: 'go' })
        .expect(201);
      expect(answer.body.assistantMessage.toolCards[0].output).toBe('# Skill: echo-code (ran)\n\nllm=SUMMARY; tool=ok');
      await ctx.closeApp();

      const { turn, inTurn, childrenOf } = theTurn();
      const [ran] = childrenOf(turn).filter((s) => s.name === 'execute_tool use_skill');
      // Regression, fixed since the review of issue 31's telemetry found it. Was: a code skill's call span named the
      // skill but no `skillhost.skill.version` (a code skill's run activates no version; its code is the catalogue's).
      expect(ran.attributes).toMatchObject({
        'gen_ai.tool.name': 'use_skill',
        'skillhost.tool.status': 'ok',
        'skillhost.skill.name': 'echo-code',
        'skillhost.skill.version': digestOf('echo-code'),
      });
      expect(digestOf('echo-code')).toMatch(/^sha256:[0-9a-f]{64}$/);
      // The code's ctx.llm.complete and ctx.tools.call, answered across the worker's messages, under its call.
      const inner = childrenOf(ran);
      expect(inner.map((s) => s.name).sort()).toEqual(['chat scripted', 'execute_tool skills.listResources']);
      expect(inner.find((s) => s.name === 'execute_tool skills.listResources')!.attributes).toMatchObject({
        'skillhost.tool.status': 'ok',
        'skillhost.skill.name': 'pdf',
        'skillhost.skill.version': digestOf('pdf'),
      });
      // The model's own two steps are the turn's.
      expect(childrenOf(turn).filter((s) => s.name === 'chat scripted')).toHaveLength(2);
      for (const span of inTurn.filter((s) => s !== turn))
        expect(inTurn.map((s) => s.spanId)).toContain(span.parentSpanId);
      expect(receiver.sumOf('skillhost.tool.calls', { tool: 'use_skill', skill: 'echo-code', status: 'ok' })).toBe(1);
    },
  );

  it('invoked by the user (/echo-code), runs before the model under the turn, its calls under it', async () => {
    ctx = await codeSkillApp();
    const chat = await request(ctx.app.getHttpServer()).post('/v1/chats').send({}).expect(201);
    ctx.model.play({ text: 'SUMMARY' }, { text: 'Done.' });
    await request(ctx.app.getHttpServer())
      .post(`/v1/chats/${chat.body.id}/messages`)
      .send({ content: '/echo-code hi there' })
      .expect(201);
    await ctx.closeApp();
    const { turn, childrenOf } = theTurn();
    const [ran] = childrenOf(turn).filter((s) => s.name === 'execute_tool use_skill');
    expect(ran.attributes['skillhost.skill.name']).toBe('echo-code');
    expect(
      childrenOf(ran)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['chat scripted', 'execute_tool skills.listResources']);
  });
});
