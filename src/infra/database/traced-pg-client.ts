import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import pg from 'pg';
import { currentTracer } from '../../domain/shared/tracer.js';

/** Statements longer than this are cut in the span: a long one is recognised by its start. */
const MAX_STATEMENT_CHARS = 2000;

/**
 * A pooled connection whose statements are spans (`db.query.text` is the parameterised SQL, never the values), under
 * the span that is current (the turn's, or a tool call's); statements made outside any span, or under one that is not
 * recorded (a turn the sampling left out), are not traced. The pool makes its connections with it while telemetry is
 * on (data-source.ts). The instrumentation-pg package needs a `require` hook, which this native ESM app does not load;
 * one subclass, used by this app's pool only, does the same without touching the `pg` module.
 */
export class TracedPgClient extends pg.Client {
  // pg's query has many forms (callbacks, submittables); only the promise form TypeORM uses is traced.
  override query(...args: unknown[]): never {
    const [config, values, callback] = args;
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    // A statement outside any span (a key check, a rate limit, the periodic checks) would be a trace of its own; one
    // in a turn that sampling left out would be dropped anyway.
    const untraced =
      trace.getActiveSpan()?.isRecording() !== true ||
      typeof text !== 'string' ||
      typeof values === 'function' ||
      typeof callback === 'function' ||
      typeof (config as { submit?: unknown }).submit === 'function';
    const query = super.query as (...a: unknown[]) => unknown;
    if (untraced) return query.apply(this, args) as never;
    const span = currentTracer().startSpan(operationOf(text), {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system.name': 'postgresql',
        'db.query.text': text.length > MAX_STATEMENT_CHARS ? `${text.slice(0, MAX_STATEMENT_CHARS)}…` : text,
        'db.operation.name': operationOf(text),
      },
    });
    const pending = query.apply(this, args) as Promise<unknown>;
    return pending.then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        const code = (error as { code?: unknown }).code;
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
        span.end();
        throw error;
      },
    ) as never;
  }
}

/** The statement's first word, upper-cased (`SELECT`, `INSERT`, `WITH`): a name with few values, for the span. */
function operationOf(text: string): string {
  return /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';
}
