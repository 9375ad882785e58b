import type { ServerResponse } from 'node:http';
import { type ProviderRequest, RecordingServer } from './recording-server.js';

/** What the scripted model does on one turn: answer with text, or call one tool. */
export type Step = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

/** A chat message as OpenAI's chat completions API has it (only what scripts read). */
export interface ChatMessage {
  role: string;
  content: string | null | ({ type: string; text?: string } & Record<string, unknown>)[];
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

/** A model turn's request (`POST …/chat/completions`). */
export interface ChatRequest {
  model: string;
  stream?: boolean;
  messages: ChatMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
}

/**
 * Decides a turn: `modelTurn` counts the model turns from 0. It may be async (a script that
 * revokes a key before it answers).
 */
export type Script = (request: ChatRequest, modelTurn: number) => Step | Promise<Step>;

/** More model turns than any test needs: a client looping on the script is stopped. */
const MAX_TURNS = 20;

/**
 * A scripted model behind OpenAI's chat completions API (`POST <base>/chat/completions`, SSE chunks
 * with `tool_calls` deltas when the request says `stream: true`, one JSON completion otherwise), for
 * clients with an OpenAI-compatible provider pointed at `url`.
 *
 * A scripted tool name is matched to the tool the client offers by suffix (`activate_team_skill` is
 * OpenCode's `skillhost_activate_team_skill`); an exact name wins. A scripted tool the client does not
 * offer, or a script that throws, is a 400 (clients retry a 500 for minutes, not a 400) that the
 * client shows, and is kept in `failures`.
 *
 * Side calls are answered minimally and kept out of `modelRequests`: the model list, and requests
 * without tools (OpenCode's title generator, a summary).
 */
export class OpenAiChatProvider {
  readonly server: RecordingServer;
  /** Why scripted turns could not be answered (a tool that is not offered): a test expects none. */
  readonly failures: string[] = [];
  private readonly turns: ProviderRequest[] = [];
  private ids = 0;

  constructor(private readonly script: Script) {
    this.server = new RecordingServer((request, res) => this.answer(request, res));
  }

  async start(): Promise<this> {
    await this.server.start();
    return this;
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  /** The base URL to give the client (`options.baseURL`): the origin and `/v1`. */
  get url(): string {
    return `${this.server.origin}/v1`;
  }

  /** The model turns' requests (side calls left out), in order. */
  get modelRequests(): ChatRequest[] {
    return this.turns.map((request) => request.body as ChatRequest);
  }

  private async answer(request: ProviderRequest, res: ServerResponse): Promise<void> {
    const path = request.path.split('?')[0];
    if (request.method === 'GET' && path === '/v1/models')
      return json(res, 200, {
        object: 'list',
        data: [{ id: 'scripted', object: 'model', owned_by: 'skillhost-tests' }],
      });
    if (request.method !== 'POST' || path !== '/v1/chat/completions')
      return json(res, 404, apiError(`No scripted route ${request.method} ${request.path}.`));
    const body = request.body as ChatRequest;
    if (!Array.isArray(body?.tools) || body.tools.length === 0)
      return this.send(res, body, { text: 'Scripted session' });
    this.turns.push(request);
    if (this.turns.length > MAX_TURNS)
      return this.fail(
        res,
        `The client asked for more than ${MAX_TURNS} model turns; the script is not ending the conversation.`,
      );
    let step: Step;
    try {
      step = await this.script(body, this.turns.length - 1);
    } catch (error) {
      return this.fail(res, `The script failed on turn ${this.turns.length - 1}: ${(error as Error).message}`);
    }
    if ('text' in step) return this.send(res, body, step);
    const offered = body.tools.map((tool) => tool.function.name);
    const matches = offeredTools(offered, step.toolCall.name);
    if (matches.length !== 1) {
      const found = matches.length === 0 ? 'no such tool' : `several: ${matches.join(', ')}`;
      return this.fail(
        res,
        `The script calls '${step.toolCall.name}', but the client offers ${found}; it offers ${offered.join(', ')}.`,
      );
    }
    const name = matches[0];
    return this.send(res, body, { toolCall: { name, arguments: step.toolCall.arguments } });
  }

  private fail(res: ServerResponse, message: string): void {
    this.failures.push(message);
    json(res, 400, apiError(message));
  }

  private send(res: ServerResponse, body: ChatRequest, step: Step): void {
    const id = `chatcmpl-scripted-${++this.ids}`;
    const toolCall =
      'toolCall' in step
        ? {
            id: `call_scripted_${this.ids}`,
            type: 'function',
            function: { name: step.toolCall.name, arguments: JSON.stringify(step.toolCall.arguments) },
          }
        : undefined;
    const finish = toolCall ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    if (!body.stream) {
      const message = toolCall
        ? { role: 'assistant', content: null, tool_calls: [toolCall] }
        : { role: 'assistant', content: (step as { text: string }).text };
      return json(res, 200, {
        id,
        object: 'chat.completion',
        created: now(),
        model: body.model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      res.write(
        `data: ${JSON.stringify({
          id,
          object: 'chat.completion.chunk',
          created: now(),
          model: body.model,
          choices,
          ...extra,
        })}\n\n`,
      );
    if (toolCall) {
      // As OpenAI streams a call: the id and name first, then the arguments in pieces.
      const args = toolCall.function.arguments;
      const half = Math.ceil(args.length / 2);
      chunk([
        {
          index: 0,
          delta: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                index: 0,
                id: toolCall.id,
                type: 'function',
                function: { name: toolCall.function.name, arguments: '' },
              },
            ],
          },
          finish_reason: null,
        },
      ]);
      for (const piece of [args.slice(0, half), args.slice(half)])
        chunk([
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null },
        ]);
    } else {
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
      chunk([{ index: 0, delta: { content: (step as { text: string }).text }, finish_reason: null }]);
    }
    chunk([{ index: 0, delta: {}, finish_reason: finish }]);
    chunk([], { usage });
    res.end('data: [DONE]\n\n');
  }
}

/**
 * The offered tools a scripted name may mean: itself alone, else those ending in it after a separator (`_`, `:`, `.`,
 * `-`).
 */
export function offeredTools(offered: readonly string[], scripted: string): string[] {
  if (offered.includes(scripted)) return [scripted];
  return offered.filter((name) => name.endsWith(scripted) && /[_:.-]$/.test(name.slice(0, -scripted.length)));
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

function apiError(message: string) {
  return { error: { message, type: 'invalid_request_error', code: null } };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
