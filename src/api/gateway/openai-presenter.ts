import { randomBytes } from 'node:crypto';
import { type ConversationItem, toolWireName } from '../../domain/chats/gateway/conversation-items.js';
import type { GatewayAnswer } from '../../domain/chats/gateway/gateway.service.js';
import type { StoredResponse } from '../../domain/chats/gateway/gateway-store.js';

/**
 * The gateway's answers in OpenAI's wire formats: chat completions (whole and as chunks), responses (whole and as
 * events), the model list and errors. Skillhost's own work (the conversation, the skills activated, its tool cards)
 * goes only in the `skillhost` field, and only when asked for: standard clients ignore it.
 */

/** What `skillhost` carries when the work is shown. */
export interface SkillhostWork {
  conversation_id: string;
  notice: string | null;
  activated_skills: readonly string[];
  tool_cards: GatewayAnswer['turn']['assistantMessage']['toolCards'];
}

export function skillhostWork(answer: GatewayAnswer): SkillhostWork {
  const activated = answer.turn.activatedThisTurn;
  return {
    conversation_id: answer.chatId,
    notice: activated.length === 0 ? null : `Skills activated: ${activated.join(', ')}.`,
    activated_skills: answer.turn.activatedSkills.map((skill) => skill.skillName),
    tool_cards: answer.turn.assistantMessage.toolCards,
  };
}

const unixTime = (date: Date) => Math.floor(date.getTime() / 1000);

export function newCompletionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

function clientCalls(output: readonly ConversationItem[]) {
  return output.flatMap((item) =>
    item.type === 'tool-call'
      ? [
          {
            id: item.callId,
            type: 'function' as const,
            function: { name: toolWireName(item), arguments: item.arguments },
          },
        ]
      : [],
  );
}

function finishReason(answer: GatewayAnswer): 'stop' | 'tool_calls' {
  return answer.turn.clientCalls.length > 0 ? 'tool_calls' : 'stop';
}

function chatUsage(answer: GatewayAnswer) {
  const prompt = answer.turn.usage.inputTokens ?? 0;
  const completion = answer.turn.usage.outputTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** A whole chat completion. */
export function presentChatCompletion(id: string, created: Date, answer: GatewayAnswer, work: boolean) {
  const calls = clientCalls(answer.output);
  return {
    id,
    object: 'chat.completion',
    created: unixTime(created),
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.text === '' && calls.length > 0 ? null : answer.text,
          refusal: null,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(answer),
      },
    ],
    usage: chatUsage(answer),
    system_fingerprint: null,
    ...(work ? { skillhost: skillhostWork(answer) } : {}),
  };
}

/** The chunks of a streamed chat completion: each has the completion's id, time and model. */
export class ChatChunks {
  constructor(
    private readonly id: string,
    private readonly created: Date,
    private readonly model: string,
  ) {}

  /** What every chunk of the completion says of it. */
  private head() {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: unixTime(this.created),
      model: this.model,
      system_fingerprint: null,
    };
  }

  private chunk(delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) {
    return { ...this.head(), choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra };
  }

  first() {
    return this.chunk({ role: 'assistant', content: '', refusal: null }, null);
  }

  text(text: string) {
    return this.chunk({ content: text }, null);
  }

  /** The client's tool calls, each whole in one delta, then the chunk that finishes the choice. */
  last(answer: GatewayAnswer, work: boolean) {
    const calls = clientCalls(answer.output).map((call, index) => ({ index, ...call }));
    return [
      ...(calls.length > 0 ? [this.chunk({ tool_calls: calls }, null)] : []),
      this.chunk({}, finishReason(answer), work ? { skillhost: skillhostWork(answer) } : {}),
    ];
  }

  usage(answer: GatewayAnswer) {
    return { ...this.head(), choices: [], usage: chatUsage(answer) };
  }
}

/** The ids of a response's output items, derived from its own so that reading it again gives the same. */
function itemId(responseId: string, prefix: 'msg' | 'fc', index: number): string {
  return `${prefix}_${responseId.slice('resp_'.length)}_${index}`;
}

/** The response and output index an item id names (`item_reference`); undefined for an id this gateway never gave. */
export function parseItemId(id: string): { responseId: string; index: number } | undefined {
  const match = /^(?:msg|fc)_([0-9a-f]{1,100})_(\d{1,6})$/.exec(id);
  return match === null ? undefined : { responseId: `resp_${match[1]}`, index: Number(match[2]) };
}

interface MessageItem {
  type: 'message';
  id: string;
  status: 'completed' | 'in_progress';
  role: 'assistant';
  content: { type: 'output_text'; text: string; annotations: never[]; logprobs: never[] }[];
}

interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  arguments: string;
  status: 'completed' | 'in_progress';
}

export type ResponseOutputItem = MessageItem | FunctionCallItem;

/** A response's output items, as OpenAI shows them. */
export function responseOutput(response: Pick<StoredResponse, 'id' | 'output'>): ResponseOutputItem[] {
  return response.output.flatMap((item, index): ResponseOutputItem[] => {
    if (item.type === 'assistant')
      return [
        {
          type: 'message' as const,
          id: itemId(response.id, 'msg', index),
          status: 'completed' as const,
          role: 'assistant' as const,
          content: [{ type: 'output_text' as const, text: item.text, annotations: [], logprobs: [] }],
        },
      ];
    if (item.type === 'tool-call')
      return [
        {
          type: 'function_call' as const,
          id: itemId(response.id, 'fc', index),
          call_id: item.callId,
          name: item.name,
          ...(item.namespace === undefined ? {} : { namespace: item.namespace }),
          arguments: item.arguments,
          status: 'completed' as const,
        },
      ];
    return [];
  });
}

/** What a response says of the request that made it. */
export interface ResponseRequestEcho {
  previousResponseId: string | null;
  store: boolean;
  temperature: number | null;
  topP: number | null;
  maxOutputTokens: number | null;
}

/** A response object: `status` in progress (the stream's first events) or completed (with its output and usage). */
export function presentResponse(
  response: Pick<StoredResponse, 'id' | 'model' | 'createdAt' | 'instructions'> &
    Partial<Pick<StoredResponse, 'output' | 'usage'>>,
  echo: ResponseRequestEcho,
  extra: Record<string, unknown> = {},
) {
  const done = response.output !== undefined;
  const input = response.usage?.inputTokens ?? 0;
  const output = response.usage?.outputTokens ?? 0;
  return {
    id: response.id,
    object: 'response',
    created_at: unixTime(response.createdAt),
    status: done ? 'completed' : 'in_progress',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: response.instructions,
    max_output_tokens: echo.maxOutputTokens,
    model: response.model,
    output: done ? responseOutput({ id: response.id, output: response.output! }) : [],
    parallel_tool_calls: true,
    previous_response_id: echo.previousResponseId,
    reasoning: { effort: null, summary: null },
    store: echo.store,
    temperature: echo.temperature,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: echo.topP,
    truncation: 'disabled',
    usage: done
      ? {
          input_tokens: input,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: input + output,
        }
      : null,
    user: null,
    metadata: {},
    ...extra,
  };
}

/** `GET /openai/v1/models`: the configured models, by name. */
export function presentModels(names: readonly string[], created: Date) {
  return {
    object: 'list',
    data: names.map((id) => ({ id, object: 'model', created: unixTime(created), owned_by: 'skillhost' })),
  };
}
