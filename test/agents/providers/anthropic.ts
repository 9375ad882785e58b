import type { ServerResponse } from 'node:http';
import { type ProviderRequest, RecordingServer, stringsIn } from './recording-server.js';

/** What the scripted model does on one turn: answer with text, or call one tool. */
export type Step = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

/** A model turn's request, as Anthropic's Messages API has it (only what scripts read). */
export interface MessagesRequest {
  model: string;
  stream?: boolean;
  system?: string | { type: string; text: string }[];
  messages: {
    role: string;
    content: string | ({ type: string; text?: string; content?: unknown } & Record<string, unknown>)[];
  }[];
  tools?: ({ name: string; description?: string; input_schema?: unknown; defer_loading?: boolean } & Record<
    string,
    unknown
  >)[];
}

/** Decides a turn: `modelTurn` counts the script's turns from 0 (loading a deferred tool is not one). */
export type Script = (request: MessagesRequest, modelTurn: number) => Step;

/** The tool a client offers for loading deferred tools (Claude Code's tool search); `select:<name>` loads one. */
const TOOL_SEARCH = 'ToolSearch';
/** More model turns than any test needs: a client looping on the script is stopped. */
const MAX_TURNS = 20;

/**
 * A scripted model behind Anthropic's Messages API (`POST /v1/messages`, SSE when the request says
 * `stream: true`), for agent CLIs pointed at it with their base-URL setting.
 *
 * A scripted tool name is matched to the tool the client offers by suffix (`activate_team_skill` is
 * `mcp__skillhost__activate_team_skill`). A client that defers tools (Claude Code names its MCP tools in
 * a message and sends their definitions with `defer_loading: true`; its `ToolSearch` answers a
 * `tool_reference`, with which the API loads one) gets what a model would do: first a `ToolSearch`
 * for `select:<name>`, then the scripted call; that loading turn is no turn of the script. A
 * scripted tool the client does not offer is a 400 (shown by the client, not retried), kept in
 * `failures`; so is a conversation past MAX_TURNS.
 *
 * Side calls (token counting, a model list, requests without tools such as a title or a quota
 * check) are answered minimally and kept out of `modelRequests`.
 */
export class AnthropicProvider {
  readonly server: RecordingServer;
  /** Why scripted turns could not be answered (a tool that is not offered): a test expects none. */
  readonly failures: string[] = [];
  private readonly turns: ProviderRequest[] = [];
  private pending: Step | undefined;
  private scriptTurn = 0;
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

  /** The base URL to give the client (`ANTHROPIC_BASE_URL`). */
  get url(): string {
    return this.server.origin;
  }

  /** The model turns' requests (side calls left out), in order. */
  get modelRequests(): MessagesRequest[] {
    return this.turns.map((request) => request.body as MessagesRequest);
  }

  private answer(request: ProviderRequest, res: ServerResponse): void {
    const path = request.path.split('?')[0];
    if (request.method === 'POST' && path === '/v1/messages/count_tokens')
      return json(res, 200, { input_tokens: Math.ceil(request.raw.length / 4) });
    if (request.method === 'GET' && path.startsWith('/v1/models'))
      return json(res, 200, { data: [], has_more: false, first_id: null, last_id: null });
    if (request.method !== 'POST' || path !== '/v1/messages')
      return json(res, 404, apiError('not_found_error', `No scripted route ${request.method} ${request.path}.`));
    const body = request.body as MessagesRequest;
    if (!Array.isArray(body?.tools) || body.tools.length === 0) return this.send(res, body, { text: '' });
    this.turns.push(request);
    if (this.turns.length > MAX_TURNS)
      return this.fail(
        res,
        `The client asked for more than ${MAX_TURNS} model turns; the script is not ending the conversation.`,
      );
    const loading = this.pending;
    let step = loading ?? this.script(body, this.scriptTurn++);
    this.pending = undefined;
    if ('toolCall' in step) {
      const resolved = this.resolveTool(body, step.toolCall.name);
      if (typeof resolved === 'object' && loading !== undefined)
        return this.fail(res, `'${resolved.deferred}' is still deferred after a ${resolved.search} for it.`);
      if (typeof resolved === 'object') {
        this.pending = step;
        step = { toolCall: { name: resolved.search, arguments: { query: `select:${resolved.deferred}` } } };
      } else if (resolved === undefined) {
        const offered = (body.tools ?? []).map((tool) => tool.name);
        return this.fail(
          res,
          `The script calls '${step.toolCall.name}', which the client does not offer (it offers ` +
            `${offered.join(', ')}).`,
        );
      } else {
        step = { toolCall: { ...step.toolCall, name: resolved } };
      }
    }
    this.send(res, body, step);
  }

  /** The offered tool's full name; or, for a deferred tool, the search tool to load it with; undefined when neither. */
  private resolveTool(body: MessagesRequest, name: string): string | { search: string; deferred: string } | undefined {
    const matches = (candidate: string) => candidate === name || candidate.endsWith(`__${name}`);
    const loaded = loadedTools(body).map((tool) => tool.name);
    const found = loaded.find(matches);
    if (found !== undefined) return found;
    const search = loaded.find((tool) => tool === TOOL_SEARCH);
    const deferred = deferredTools(body).find(matches);
    return search !== undefined && deferred !== undefined ? { search, deferred } : undefined;
  }

  /** A 400, which the client shows and does not retry. */
  private fail(res: ServerResponse, failure: string): void {
    this.failures.push(failure);
    json(res, 400, apiError('invalid_request_error', failure));
  }

  private send(res: ServerResponse, body: MessagesRequest, step: Step): void {
    const block =
      'text' in step
        ? ({ type: 'text', text: step.text } as const)
        : ({
            type: 'tool_use',
            id: `toolu_${String(++this.ids).padStart(4, '0')}`,
            name: step.toolCall.name,
            input: step.toolCall.arguments,
          } as const);
    const message = { id: `msg_${this.server.requests.length}`, type: 'message', role: 'assistant', model: body.model };
    const stopReason = block.type === 'text' ? 'end_turn' : 'tool_use';
    const usage = { input_tokens: 10, output_tokens: 5 };
    if (body.stream !== true)
      return json(res, 200, { ...message, content: [block], stop_reason: stopReason, stop_sequence: null, usage });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    if (block.type === 'text') {
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: block.text } });
    } else {
      event('content_block_start', { index: 0, content_block: { ...block, input: {} } });
      event('content_block_delta', {
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    event('content_block_stop', { index: 0 });
    event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 5 } });
    event('message_stop', {});
    res.end();
  }
}

/**
 * The tools the model can call now: those sent without `defer_loading`, and deferred ones loaded
 * since (a `tool_reference` to them in a tool result, which the API expands into the definition).
 */
export function loadedTools(request: MessagesRequest): NonNullable<MessagesRequest['tools']> {
  const referenced = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    const block = value as { type?: unknown; tool_name?: unknown };
    if (block.type === 'tool_reference' && typeof block.tool_name === 'string') referenced.add(block.tool_name);
    Object.values(value).forEach(visit);
  };
  visit(request.messages);
  return (request.tools ?? []).filter((tool) => tool.defer_loading !== true || referenced.has(tool.name));
}

/**
 * The tools the client says can be loaded: sent with `defer_loading`, or named one per line in a
 * message (Claude Code sends a deferred MCP tool's definition only once it was searched for).
 */
export function deferredTools(request: MessagesRequest): string[] {
  const listed = stringsIn(request.messages)
    .filter((text) => text.includes('ToolSearch'))
    .flatMap((text) => text.split('\n'))
    .map((line) => line.trim())
    .filter((line) => /^[\w.-]+$/.test(line));
  return [
    ...new Set([
      ...(request.tools ?? []).filter((tool) => tool.defer_loading === true).map((tool) => tool.name),
      ...listed,
    ]),
  ];
}

/**
 * What the model is shown of a request: the system prompt, the messages, and the loaded tools. A
 * deferred tool is sent with its description, but the API keeps it from the model until it is
 * loaded, so it is left out here.
 */
export function shownToModel(request: MessagesRequest): unknown {
  return { system: request.system, messages: request.messages, tools: loadedTools(request) };
}

/** The text of the last user message's tool results (what the client answered the model's last call with). */
export function lastToolResult(request: MessagesRequest): string {
  const last = request.messages[request.messages.length - 1];
  if (last === undefined || typeof last.content === 'string') return '';
  return last.content
    .filter((block) => block.type === 'tool_result')
    .map((block) => stringsIn(block.content).join('\n'))
    .join('\n');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function apiError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}
