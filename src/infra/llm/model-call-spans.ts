import { type Attributes, type Span, SpanStatusCode, metrics, trace } from '@opentelemetry/api';
import type { LanguageModelMiddleware } from 'ai';
import type { ModelConfig } from '../../config/app-config.js';

type Usage = {
  inputTokens: { total: number | undefined };
  outputTokens: { total: number | undefined };
};
type FinishReason = { unified: string } | string;

/**
 * One span per request to the model's provider (`chat <model>`, as OpenTelemetry's GenAI conventions name it), under
 * whatever span is current (the turn's), with the provider, the model and the tokens it counted; and the model calls
 * and their tokens as metrics. A step of the tool loop is one request. Added to a model only while telemetry is on
 * (language-model.factory.ts): off, the model is not wrapped at all.
 */
export function modelCallSpans(config: ModelConfig): LanguageModelMiddleware {
  const tracer = trace.getTracer('skillhost');
  const meter = metrics.getMeter('skillhost');
  const calls = meter.createCounter('skillhost.model.calls', { description: 'Requests to model providers.' });
  const tokens = meter.createHistogram('gen_ai.client.token.usage', {
    description: 'Tokens per model request, by type (input, output).',
    unit: '{token}',
  });
  const labels = { 'gen_ai.provider.name': config.provider, 'gen_ai.request.model': config.name };
  const start = (operation: 'generate' | 'stream'): Span =>
    tracer.startSpan(`chat ${config.name}`, {
      attributes: {
        ...labels,
        'gen_ai.operation.name': 'chat',
        'skillhost.model.id': config.model,
        'skillhost.model.streamed': operation === 'stream',
      },
    });
  const finish = (span: Span, usage: Usage | undefined, reason: FinishReason | undefined, error?: unknown) => {
    const facts: Attributes = {};
    const input = usage?.inputTokens.total;
    const output = usage?.outputTokens.total;
    if (input !== undefined) facts['gen_ai.usage.input_tokens'] = input;
    if (output !== undefined) facts['gen_ai.usage.output_tokens'] = output;
    if (reason !== undefined)
      facts['gen_ai.response.finish_reasons'] = [typeof reason === 'string' ? reason : reason.unified];
    span.setAttributes(facts);
    if (error !== undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      if (error instanceof Error) span.recordException(error);
    }
    span.end();
    calls.add(1, { ...labels, outcome: error === undefined ? 'ok' : 'error' });
    if (input !== undefined) tokens.record(input, { ...labels, 'gen_ai.token.type': 'input' });
    if (output !== undefined) tokens.record(output, { ...labels, 'gen_ai.token.type': 'output' });
  };
  return {
    specificationVersion: 'v3',
    wrapGenerate: async ({ doGenerate }) => {
      const span = start('generate');
      try {
        const result = await doGenerate();
        finish(span, result.usage, result.finishReason);
        return result;
      } catch (error) {
        finish(span, undefined, undefined, error);
        throw error;
      }
    },
    wrapStream: async ({ doStream }) => {
      const span = start('stream');
      let result: Awaited<ReturnType<typeof doStream>>;
      try {
        result = await doStream();
      } catch (error) {
        finish(span, undefined, undefined, error);
        throw error;
      }
      let usage: Usage | undefined;
      let reason: FinishReason | undefined;
      let streamError: unknown;
      const watched = result.stream.pipeThrough(
        new TransformStream({
          transform(part, controller) {
            if (part.type === 'finish') [usage, reason] = [part.usage, part.finishReason];
            else if (part.type === 'error') streamError = part.error;
            controller.enqueue(part);
          },
          flush() {
            finish(span, usage, reason, streamError);
          },
        }),
      );
      return { ...result, stream: watched };
    },
  };
}
