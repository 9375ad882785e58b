import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A scripted model server on 127.0.0.1: the one thing tests replace. It speaks OpenAI's chat
 * completions (`…/chat/completions`) and, for the `anthropic` provider, Anthropic's Messages API
 * (`…/messages`). Each request takes the next step of the script (or asks `respond`), answering as
 * JSON or as SSE when the request says `stream: true`. Every request is recorded, so tests can
 * assert what the model was sent: system prompt, tools offered, messages.
 */
export type ScriptStep = (
  | { text: string }
  | { toolCalls: { name: string; arguments: string | Record<string, unknown>; id?: string }[]; text?: string }
  | { status: number; body?: string }
  | { hang: true }
  | { garbage: string }
) & {
  /** Waits this long before answering (a slow model). */
  delayMs?: number;
  /** Waits this long between the pieces of a streamed text (a model that writes as it thinks). */
  pieceDelayMs?: number;
};

export interface RecordedRequest {
  /** Which API the request used; `body` is as sent, in that API's shape (typed here as OpenAI's). */
  api: 'openai' | 'anthropic';
  body: {
    model: string;
    stream?: boolean;
    messages: { role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
    tool_choice?: unknown;
  };
  headers: IncomingMessage['headers'];
}

export class ScriptedModelServer {
  readonly requests: RecordedRequest[] = [];
  private script: ScriptStep[] = [];
  private respond: ((request: RecordedRequest) => ScriptStep) | undefined;
  private server: Server | undefined;
  private readonly hanging = new Set<ServerResponse>();
  private callCounter = 0;

  /** Base URL to configure as the model's `base_url`. */
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.hanging.clear();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Replaces the script; requests consume it in order. */
  play(...steps: ScriptStep[]): this {
    this.script = [...steps];
    this.respond = undefined;
    this.requests.length = 0;
    return this;
  }

  /** Answers every request by a function of it (for concurrent turns whose order is unknown). */
  answerWith(respond: (request: RecordedRequest) => ScriptStep): this {
    this.script = [];
    this.respond = respond;
    this.requests.length = 0;
    return this;
  }

  get remainingSteps(): number {
    return this.script.length;
  }

  /** The system prompt of a recorded request. */
  static systemPrompt(request: RecordedRequest): string {
    const system = request.body.messages.find((m) => m.role === 'system');
    return typeof system?.content === 'string' ? system.content : '';
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const api = req.url?.endsWith('/chat/completions')
      ? 'openai'
      : req.url?.endsWith('/messages')
        ? 'anthropic'
        : undefined;
    if (req.method !== 'POST' || api === undefined) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const recorded: RecordedRequest = {
      api,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      headers: req.headers,
    };
    this.requests.push(recorded);
    const step = this.respond?.(recorded) ??
      this.script.shift() ?? {
        status: 500,
        body: JSON.stringify({ error: { message: 'the test script has no step left' } }),
      };
    if (step.delayMs !== undefined) {
      // A delayed answer is cut like a hanging one when the server stops.
      this.hanging.add(res);
      await new Promise((resolve) => setTimeout(resolve, step.delayMs).unref());
      this.hanging.delete(res);
      if (res.destroyed) return;
    }
    if ('hang' in step) {
      this.hanging.add(res);
      return;
    }
    if ('status' in step) {
      const message = `scripted failure ${step.status}`;
      const fallback =
        api === 'anthropic'
          ? { type: 'error', error: { type: 'api_error', message } }
          : { error: { message, type: 'server_error' } };
      res.writeHead(step.status, { 'content-type': 'application/json' }).end(step.body ?? JSON.stringify(fallback));
      return;
    }
    if ('garbage' in step) {
      res
        .writeHead(200, { 'content-type': recorded.body.stream ? 'text/event-stream' : 'application/json' })
        .end(step.garbage);
      return;
    }
    const answer = {
      text: 'text' in step ? (step.text ?? '') : '',
      toolCalls: ('toolCalls' in step ? step.toolCalls : []).map((call) => ({
        id: call.id ?? `call_${++this.callCounter}`,
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
      })),
    };
    if (api === 'anthropic') this.answerAnthropic(res, recorded, answer);
    else await this.answerOpenAi(res, recorded, answer, step.pieceDelayMs);
  }

  private async answerOpenAi(
    res: ServerResponse,
    recorded: RecordedRequest,
    answer: ScriptedAnswer,
    pieceDelayMs = 0,
  ): Promise<void> {
    const { text } = answer;
    const toolCalls = answer.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
    const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
    const base = {
      id: `chatcmpl_${this.requests.length}`,
      created: Math.floor(Date.now() / 1000),
      model: recorded.body.model,
    };
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!recorded.body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: text || null,
                ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
              },
              finish_reason: finishReason,
            },
          ],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({
          ...base,
          object: 'chat.completion.chunk',
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`,
      );
    send({ role: 'assistant', content: '' });
    // Text arrives in pieces, as real providers send it.
    for (const piece of textPieces(text)) {
      send({ content: piece });
      if (pieceDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, pieceDelayMs).unref());
      if (res.destroyed) return;
    }
    for (const [index, call] of toolCalls.entries()) send({ tool_calls: [{ index, ...call }] });
    send({}, finishReason);
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  /** Anthropic's Messages API: content blocks (text, tool_use) and stop_reason, as JSON or as its SSE events. */
  private answerAnthropic(res: ServerResponse, recorded: RecordedRequest, answer: ScriptedAnswer): void {
    const stopReason = answer.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
    const message = {
      id: `msg_${this.requests.length}`,
      type: 'message',
      role: 'assistant',
      model: recorded.body.model,
    };
    if (!recorded.body.stream) {
      const content = [
        ...(answer.text ? [{ type: 'text', text: answer.text }] : []),
        ...answer.toolCalls.map((call) => ({
          type: 'tool_use',
          id: call.id,
          name: call.name,
          input: parseOr(call.arguments),
        })),
      ];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          ...message,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 5 },
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const send = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('message_start', {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    });
    let index = 0;
    if (answer.text) {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      for (const piece of textPieces(answer.text))
        send('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
      send('content_block_stop', { index: index++ });
    }
    for (const call of answer.toolCalls) {
      send('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: call.arguments } });
      send('content_block_stop', { index: index++ });
    }
    send('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    send('message_stop', {});
    res.end();
  }
}

interface ScriptedAnswer {
  text: string;
  toolCalls: { id: string; name: string; arguments: string }[];
}

function textPieces(text: string): string[] {
  return text.match(/.{1,12}/gs) ?? [];
}

/** A tool call's arguments as the JSON value they spell, or the raw text when they spell none. */
function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
