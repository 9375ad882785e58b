import { type LoopTool, type LoopToolCall, toolSetOf } from '@skillhost/ai-sdk';
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import {
  APICallError,
  generateText,
  type LanguageModel,
  type ModelMessage,
  RetryError,
  stepCountIs,
  streamText,
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
}

export interface ToolLoopResult {
  text: string;
  /** The last step still asked for tools: the step limit ended the turn. */
  stepLimitReached: boolean;
  /** The answer was longer than `maxAnswerBytes`: `text` is its first `maxAnswerBytes` bytes. */
  truncated: boolean;
  /** The model's tool calls in the order it made them (executed or refused), by call id. */
  toolCallIds: string[];
}

export async function runToolLoop<T extends LoopTool>(request: ToolLoopRequest<T>): Promise<ToolLoopResult> {
  const tools = toolSetOf(request.tools, request.execute);
  // A timer cleared at the end, not AbortSignal.timeout(): that one would keep every finished turn
  // reachable until its time-out fires.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timeout')), request.timeoutMs);
  const settings = {
    model: request.model,
    system: request.system,
    messages: request.messages,
    tools: request.tools.length > 0 ? tools : undefined,
    stopWhen: stepCountIs(request.maxSteps),
    prepareStep: request.systemForStep && (() => ({ system: request.systemForStep!() })),
    maxRetries: request.maxRetries,
    abortSignal: controller.signal,
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
  return {
    text,
    stepLimitReached: result.finishReason === 'tool-calls' && result.steps.length >= request.maxSteps,
    truncated: text.length < result.text.length,
    toolCallIds,
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
  return {
    text,
    stepLimitReached: !truncated && lastFinishReason === 'tool-calls' && steps >= request.maxSteps,
    truncated,
    toolCallIds,
  };
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
