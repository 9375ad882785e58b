import { type LoopTool, type LoopToolCall, toolSetOf } from '@skillhost/ai-sdk';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  APICallError,
  generateText,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  Output,
  RetryError,
  stepCountIs,
  streamText,
  type ToolChoice,
  type ToolSet,
  tool,
} from 'ai';
import { AppError, ErrorCode } from '@skillhost/core';
import { currentRequestId } from '../../shared/request-scope.js';

/**
 * Runs one turn of the model with tools through the Vercel AI SDK: the SDK calls the model, our
 * `execute` runs each tool server-side, and the loop goes on until a final answer or the step
 * limit. Provider failures become MODEL_ERROR naming a request id; the provider's reason goes to
 * the log and to admins.
 */
export type { LoopTool, LoopToolCall };

export type LoopEvent =
  | { type: 'tool-call'; toolCallId: string; wireName: string; input: unknown }
  | { type: 'text-delta'; text: string };

/** What a client of the OpenAI-compatible gateway sets on each model call (all optional: the provider's defaults). */
export interface ModelCallOptions {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  /** Whether the model must, may or must not call a tool, or which one (by wire name). */
  toolChoice?: 'auto' | 'none' | 'required' | { toolName: string };
  /** JSON output, with a schema when given (OpenAI's `json_schema`), else any JSON object (`json_object`). */
  responseFormat?: { type: 'json'; schema?: Record<string, unknown>; name?: string; description?: string };
}

export interface ToolLoopRequest<T extends LoopTool = LoopTool> {
  model: LanguageModel;
  modelName: string;
  system: string;
  /**
   * The system prompt of each step after the first, when it can change during the turn (a code skill's
   * promptInjection).
   */
  systemForStep?: () => string;
  messages: ModelMessage[];
  tools: readonly T[];
  /** Runs a tool the model called, given the definition it was registered with; returns the text the model reads. */
  execute(call: LoopToolCall, tool: T): Promise<string>;
  /** Records a call the SDK refused before execution (unknown tool, unparseable arguments). */
  refused(call: LoopToolCall, reason: string): void;
  maxSteps: number;
  /**
   * The most of the answer (UTF-8 bytes) kept and relayed; past it the model is stopped (`app.tools.max_answer_bytes`).
   */
  maxAnswerBytes: number;
  timeoutMs: number;
  maxRetries: number;
  onEvent?: (event: LoopEvent) => void;
  /**
   * The client's own tools (the gateway): offered beside `tools`, never run here. A step calling one ends the loop,
   * and its calls are answered in `clientCalls` for the client to run.
   */
  clientTools?: readonly LoopTool[];
  callOptions?: ModelCallOptions;
}

export interface ToolLoopResult {
  text: string;
  /** The last step still asked for tools: the step limit ended the turn. */
  stepLimitReached: boolean;
  /** The answer was longer than `maxAnswerBytes`: `text` is its first `maxAnswerBytes` bytes. */
  truncated: boolean;
  /** The model's tool calls in the order it made them (executed or refused), by call id. */
  toolCallIds: string[];
  /** The calls of the client's own tools the last step made: the loop ended for the client to run them. */
  clientCalls: LoopToolCall[];
  /** Tokens over every step, as the provider counted them (undefined when it did not say). */
  usage: { inputTokens: number | undefined; outputTokens: number | undefined };
}

export async function runToolLoop<T extends LoopTool>(request: ToolLoopRequest<T>): Promise<ToolLoopResult> {
  const tools = withClientTools(toolSetOf(request.tools, request.execute), request.clientTools ?? []);
  // A timer cleared at the end, not AbortSignal.timeout(): that one would keep every finished turn
  // reachable until its time-out fires.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timeout')), request.timeoutMs);
  const settings = {
    model: request.model,
    system: request.system,
    messages: request.messages,
    tools: Object.keys(tools).length > 0 ? tools : undefined,
    stopWhen: stepCountIs(request.maxSteps),
    prepareStep: request.systemForStep && (() => ({ system: request.systemForStep!() })),
    maxRetries: request.maxRetries,
    abortSignal: controller.signal,
    // A gateway's client sends its own system messages (its instructions, after Skillhost's prompt); a chat never does.
    allowSystemInMessages: request.callOptions !== undefined,
    ...callSettings(request.callOptions),
  };
  try {
    // Streaming only when someone listens (SSE): web streams cost CPU a plain JSON turn need not pay.
    return request.onEvent === undefined
      ? await generate(request, settings)
      : await stream(request, settings, request.onEvent, () => controller.abort(new Error('answer cap')));
  } catch (error) {
    throw modelError(request.modelName, error, controller.signal.aborted, request.timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}

type LoopSettings = Parameters<typeof generateText>[0] & Parameters<typeof streamText>[0];

async function generate(request: ToolLoopRequest<LoopTool>, settings: LoopSettings): Promise<ToolLoopResult> {
  const result = await generateText(settings);
  const toolCallIds: string[] = [];
  for (const step of result.steps) {
    for (const part of step.content) {
      if (part.type === 'tool-call' || part.type === 'tool-error') addOnce(toolCallIds, part.toolCallId);
      if (part.type === 'tool-error')
        request.refused(
          { toolCallId: part.toolCallId, wireName: part.toolName, input: part.input },
          describeError(part.error),
        );
    }
  }
  const text = cutToUtf8Bytes(result.text, request.maxAnswerBytes);
  const clientCalls = clientCallsOf(request.clientTools, result.toolCalls);
  return {
    text,
    stepLimitReached:
      clientCalls.length === 0 && result.finishReason === 'tool-calls' && result.steps.length >= request.maxSteps,
    truncated: text.length < result.text.length,
    toolCallIds,
    clientCalls,
    usage: { inputTokens: result.totalUsage.inputTokens, outputTokens: result.totalUsage.outputTokens },
  };
}

/** The client's tools, beside ours: without `execute`, so a step calling one ends the loop (the client runs it). */
function withClientTools(tools: ToolSet, clientTools: readonly LoopTool[]): ToolSet {
  for (const definition of clientTools)
    tools[definition.wireName] = tool({
      description: definition.description,
      inputSchema: jsonSchema<unknown>(definition.inputSchema as Parameters<typeof jsonSchema>[0]),
    });
  return tools;
}

/** The last step's calls of the client's tools, in the order the model made them. */
function clientCallsOf(
  clientTools: readonly LoopTool[] | undefined,
  calls: readonly { toolCallId: string; toolName: string; input: unknown }[],
): LoopToolCall[] {
  if (clientTools === undefined || clientTools.length === 0) return [];
  const names = new Set(clientTools.map((definition) => definition.wireName));
  return calls
    .filter((call) => names.has(call.toolName))
    .map((call) => ({ toolCallId: call.toolCallId, wireName: call.toolName, input: call.input }));
}

/** The AI SDK's settings for a client's call options. */
function callSettings(options: ModelCallOptions | undefined) {
  if (options === undefined) return {};
  const { toolChoice, responseFormat } = options;
  return {
    temperature: options.temperature,
    topP: options.topP,
    maxOutputTokens: options.maxOutputTokens,
    stopSequences: options.stopSequences,
    toolChoice:
      toolChoice === undefined || typeof toolChoice === 'string'
        ? toolChoice
        : ({ type: 'tool', toolName: toolChoice.toolName } as ToolChoice<ToolSet>),
    // The text as the model wrote it, with the provider asked for JSON: a client parses its own answer.
    output:
      responseFormat === undefined
        ? undefined
        : {
            ...Output.text(),
            responseFormat: Promise.resolve({
              type: 'json' as const,
              ...(responseFormat.schema === undefined ? {} : { schema: responseFormat.schema }),
              ...(responseFormat.name === undefined ? {} : { name: responseFormat.name }),
              ...(responseFormat.description === undefined ? {} : { description: responseFormat.description }),
            }),
          },
  };
}

/** `stop` ends the model's work once the answer is over the cap: the rest would be neither kept nor relayed. */
async function stream(
  request: ToolLoopRequest<LoopTool>,
  settings: LoopSettings,
  onEvent: (event: LoopEvent) => void,
  stop: () => void,
): Promise<ToolLoopResult> {
  let failure: unknown;
  let text = '';
  let textBytes = 0;
  let truncated = false;
  let steps = 0;
  let lastFinishReason: string | undefined;
  const toolCallIds: string[] = [];
  let stepCalls: { toolCallId: string; toolName: string; input: unknown }[] = [];
  let lastStepCalls: typeof stepCalls = [];
  const usage: ToolLoopResult['usage'] = { inputTokens: undefined, outputTokens: undefined };
  const result = streamText({
    ...settings,
    onError: ({ error }) => {
      failure ??= error;
    },
  });
  read: for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta': {
        const bytes = Buffer.byteLength(part.text);
        const piece =
          textBytes + bytes <= request.maxAnswerBytes
            ? part.text
            : cutToUtf8Bytes(part.text, request.maxAnswerBytes - textBytes);
        text += piece;
        textBytes += bytes;
        if (piece !== '') onEvent({ type: 'text-delta', text: piece });
        if (piece.length < part.text.length) {
          truncated = true;
          stop();
          break read;
        }
        break;
      }
      case 'tool-call':
        addOnce(toolCallIds, part.toolCallId);
        stepCalls.push(part);
        onEvent({ type: 'tool-call', toolCallId: part.toolCallId, wireName: part.toolName, input: part.input });
        break;
      case 'tool-error':
        addOnce(toolCallIds, part.toolCallId);
        request.refused(
          { toolCallId: part.toolCallId, wireName: part.toolName, input: part.input },
          describeError(part.error),
        );
        break;
      case 'finish-step':
        steps++;
        lastFinishReason = part.finishReason;
        lastStepCalls = stepCalls;
        stepCalls = [];
        usage.inputTokens = sum(usage.inputTokens, part.usage.inputTokens);
        usage.outputTokens = sum(usage.outputTokens, part.usage.outputTokens);
        // Text of a step that went on to call tools is thinking aloud; the answer is the final step's.
        if (part.finishReason === 'tool-calls') {
          text = '';
          textBytes = 0;
        }
        break;
      case 'error':
        failure ??= part.error;
        break;
      case 'abort':
        failure ??= new Error('aborted');
        break;
    }
  }
  if (failure !== undefined && !truncated) throw failure;
  const clientCalls = truncated ? [] : clientCallsOf(request.clientTools, lastStepCalls);
  return {
    text,
    stepLimitReached:
      clientCalls.length === 0 && !truncated && lastFinishReason === 'tool-calls' && steps >= request.maxSteps,
    truncated,
    toolCallIds,
    clientCalls,
    usage,
  };
}

function sum(total: number | undefined, more: number | undefined): number | undefined {
  return more === undefined ? total : (total ?? 0) + more;
}

function addOnce(ids: string[], id: string): void {
  if (!ids.includes(id)) ids.push(id);
}

/** One answer without tools (a code skill's `ctx.llm.complete`), with the loop's time-out and its MODEL_ERROR. */
export async function completeOnce(request: {
  model: LanguageModel;
  modelName: string;
  prompt: string;
  system?: string;
  timeoutMs: number;
  maxRetries: number;
}): Promise<string> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timeout')), request.timeoutMs);
  try {
    const result = await generateText({
      model: request.model,
      system: request.system,
      prompt: request.prompt,
      maxRetries: request.maxRetries,
      abortSignal: controller.signal,
    });
    return result.text;
  } catch (error) {
    throw modelError(request.modelName, error, controller.signal.aborted, request.timeoutMs);
  } finally {
    clearTimeout(timer);
  }
}

/** The longest start of `text` that is at most `maxBytes` in UTF-8, never splitting a character. */
export function cutToUtf8Bytes(text: string, maxBytes: number): string {
  // Most answers are far below the cap: 3 bytes per UTF-16 unit is the most UTF-8 ever needs.
  if (text.length * 3 <= maxBytes) return text;
  if (maxBytes <= 0) return '';
  const { read } = new TextEncoder().encodeInto(text, new Uint8Array(maxBytes));
  return text.slice(0, read);
}

const modelLog = new Logger('Model');

/**
 * A failed model call as everyone may read it: which model, and the request id under which the
 * server's log holds the reason. The provider's own words (which may name its address, echo its
 * markup or a key) are logged and go to admins only (`adminDetails`); a time-out is our own words.
 */
function modelError(modelName: string, error: unknown, timedOut: boolean, timeoutMs: number): AppError {
  // A call outside any request (a GraphQL operation over a WebSocket) gets an id of its own, logged with it.
  const requestId = currentRequestId() ?? randomUUID();
  if (timedOut) {
    modelLog.warn(`Model '${modelName}' did not answer within ${timeoutMs} ms (request id ${requestId})`);
    return new AppError(
      ErrorCode.MODEL_ERROR,
      `Model '${modelName}' did not answer within ${timeoutMs} ms (request id ${requestId}).`,
      { model: modelName, reason: 'timeout', requestId },
    );
  }
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  const status = APICallError.isInstance(cause) ? cause.statusCode : undefined;
  const reason = describeError(cause);
  modelLog.warn(
    `Model '${modelName}' failed (request id ` +
      `${requestId}${status === undefined ? '' : `, provider status ${status}`}): ${reason}`,
  );
  return new AppError(
    ErrorCode.MODEL_ERROR,
    `Model '${modelName}' could not answer (request id ` +
      `${requestId}); an admin can find the reason in the server's log.`,
    { model: modelName, requestId },
    { reason, ...(status !== undefined ? { providerStatus: status } : {}) },
  );
}

function describeError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const suffix = cause instanceof Error && !error.message.includes(cause.message) ? ` (${cause.message})` : '';
    return `${error.message}${suffix}`.slice(0, 1000);
  }
  return String(error).slice(0, 1000);
}
