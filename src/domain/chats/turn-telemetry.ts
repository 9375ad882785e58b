import {
  type Attributes,
  type Counter,
  type Meter,
  type MeterProvider,
  metrics,
  type Span,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { KNOWN_TOOL_NAMES, type SkillTool } from '@skillhost/core';
import type { ToolExecution } from '@skillhost/ai-sdk';
import { errorCodeOf } from '../shared/error-code-of.js';
import { currentTracer } from '../shared/tracer.js';

/**
 * The turn's spans and counters, through the OpenTelemetry API alone: without an SDK (telemetry off, the default) every
 * call here is the API's no-op. The SDK and its exporters are infra/observability's (telemetry.service.ts), started
 * only when `[app.telemetry] endpoint` is set; the model calls' spans are infra/llm's, the statements'
 * infra/database's.
 */
interface Instruments {
  provider: MeterProvider;
  turns: Counter;
  toolCalls: Counter;
}
let instruments: Instruments | undefined;

/**
 * The API has no proxy for meters (unlike tracers): a meter taken before the SDK starts stays a no-op. So the counters
 * are made from the provider registered now, and made again when it changes (an app started or stopped).
 */
function instrumentsNow(): Instruments {
  const provider = metrics.getMeterProvider();
  if (instruments?.provider !== provider) instruments = makeInstruments(provider, provider.getMeter('skillhost'));
  return instruments;
}

function makeInstruments(provider: MeterProvider, meter: Meter): Instruments {
  return {
    provider,
    turns: meter.createCounter('skillhost.turns', { description: 'Chat turns, by model and outcome.' }),
    toolCalls: meter.createCounter('skillhost.tool.calls', {
      description: 'Skill tool calls, by tool, skill and status.',
    }),
  };
}

/** The facts a turn's span starts with; the model and style are added once the turn has planned. */
export interface TurnSpanFacts {
  chatId: string;
  /** The gateway's turns (an OpenAI-compatible client's) and the chat API's are told apart. */
  door: 'chat' | 'gateway';
}

/**
 * Runs a turn inside its span (`skillhost.turn`), the parent of its model calls, tool calls and statements; counts it
 * by model and outcome.
 */
export async function traceTurn<T extends { assistantMessage: { model?: string | null } }>(
  facts: TurnSpanFacts,
  requestedModel: string | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const attributes = { 'skillhost.chat.id': facts.chatId, 'skillhost.turn.door': facts.door };
  return currentTracer().startActiveSpan('skillhost.turn', { attributes }, async (span) => {
    try {
      const result = await work();
      instrumentsNow().turns.add(1, { model: result.assistantMessage.model ?? requestedModel ?? '', outcome: 'ok' });
      return result;
    } catch (error) {
      const code = errorCodeOf(error);
      failed(span, error, code);
      instrumentsNow().turns.add(1, { model: requestedModel ?? '', outcome: code });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** What the turn's span learns once the turn is planned: the model it asks and the tool style it offers. */
export function annotateTurn(model: string, style: string | undefined, provider: string): void {
  trace.getActiveSpan()?.setAttributes({
    'gen_ai.request.model': model,
    'gen_ai.provider.name': provider,
    'skillhost.tool_style': style ?? 'none',
  });
}

/** Where a tool call's span finds the version of the skill it used, when the call did not activate one. */
export interface SkillVersions {
  /** The chat's pinned version (what its reads come from). */
  pinned(skill: string): string | undefined;
  /** The catalogue's version, the one loaded now. */
  current(skill: string): string | undefined;
}

/**
 * Runs one skill tool call inside its span (`execute_tool <name>`, as OpenTelemetry's GenAI conventions name it) with
 * the skill it used and that skill's version digest: the one it activated; for a skill it ran or activated without
 * pinning a version (a code skill's code, a skill too big to keep), the catalogue's; else the chat's pinned one, else
 * the catalogue's. Counts it by tool, skill and status. A call that a code skill makes (`ctx.tools.call`) runs inside
 * the code skill's own call, so its span is that call's child.
 */
export function traceToolCall(
  tool: SkillTool,
  versions: SkillVersions,
  run: () => Promise<ToolExecution>,
): Promise<ToolExecution> {
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name };
  return currentTracer().startActiveSpan(`execute_tool ${tool.name}`, { attributes }, async (span) => {
    try {
      const execution = await run();
      const { card } = execution;
      const skill = execution.activated ?? card.summary.skill ?? undefined;
      // Off, or sampled out, the span keeps nothing: the version is not looked up for it.
      if (span.isRecording()) {
        const version = skill === undefined ? undefined : versionUsed(execution, skill, versions);
        const facts: Attributes = { 'gen_ai.tool.call.id': card.id, 'skillhost.tool.status': card.status };
        if (skill !== undefined) facts['skillhost.skill.name'] = skill;
        if (version) facts['skillhost.skill.version'] = version;
        span.setAttributes(facts);
      }
      if (card.status === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
      instrumentsNow().toolCalls.add(1, {
        tool: KNOWN_TOOL_NAMES.has(card.tool) ? card.tool : 'unknown',
        skill: skill ?? '',
        status: card.status,
      });
      return execution;
    } catch (error) {
      failed(span, error, errorCodeOf(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The version of `skill` a call used (see traceToolCall). */
function versionUsed(execution: ToolExecution, skill: string, versions: SkillVersions): string | undefined {
  if (execution.version !== undefined) return execution.version;
  if (execution.activated !== undefined) return versions.current(skill);
  return versions.pinned(skill) ?? versions.current(skill);
}

function failed(span: Span, error: unknown, code: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  span.setAttribute('error.type', code);
  if (error instanceof Error) span.recordException(error);
}
