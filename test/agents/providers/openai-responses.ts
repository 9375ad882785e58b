import type { ServerResponse } from 'node:http';
import { type ProviderRequest, RecordingServer } from './recording-server.js';

/**
 * A scripted model behind the OpenAI Responses API (`POST /v1/responses`, streamed as SSE), as
 * Codex speaks it (codex-rs/codex-api/src/sse/responses.rs `process_sse`): `response.created`,
 * then each output item as `response.output_item.added` / `.done` (text also as
 * `response.output_text.delta`, a call's arguments as `response.function_call_arguments.*`), and
 * `response.completed` with the response id and usage. Codex reads the items from
 * `output_item.done` and ends the turn only on `response.completed`.
 *
 * Codex offers an MCP server's tools inside one `{"type": "namespace", "name": "mcp__<server>"}`
 * tool (its `description` is the server's `instructions`); a call of one of them names the
 * namespace in the `function_call` item, as the real model does. For models whose metadata says
 * they search tools (gpt-5.5…), Codex defers MCP tools: it offers `{"type": "tool_search"}`, the
 * model answers a `tool_search_call` item, and the tools found come back in a
 * `tool_search_output` input item; a scripted `tool_search` call is answered that way, and tools
 * loaded so are offered tools too.
 */

/** What the scripted model answers in one turn. */
export type ScriptStep = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

/** Decides the model's answer to the `modelTurn`-th model request (0-based). */
export type Script = (request: ResponsesRequest, modelTurn: number) => ScriptStep;

/** The parts of a Responses request the scripts and tests read (the rest is in `body`). */
export interface ResponsesRequest {
  /** The whole parsed body: `input`, `tools`, `instructions`, `model`… */
  body: ResponsesBody;
  /**
   * Every tool offered, flattened: `{ fullName: 'mcp__skillhost__activate_team_skill', name: 'activate_team_skill',
   * namespace: 'mcp__skillhost' }`, those of `tools` and those a tool search loaded (`tool_search_output` items of
   * `input`).
   */
  tools: OfferedTool[];
  raw: ProviderRequest;
}

export interface ResponsesBody {
  model?: string;
  instructions?: string;
  input?: unknown[];
  tools?: WireTool[];
  [key: string]: unknown;
}

interface WireTool {
  type: string;
  name?: string;
  description?: string;
  tools?: WireTool[];
  [key: string]: unknown;
}

export interface OfferedTool {
  /** The namespace and the name joined by `__`, as clients spell prefixed MCP tools. */
  fullName: string;
  name: string;
  namespace?: string;
  description?: string;
  parameters?: unknown;
  /** Codex's own `tool_search` (a `tool_search_call` item, not a function call). */
  search?: boolean;
}

/** A script that plays `steps` in order, then answers `done` for every later turn. */
export function inOrder(...steps: ScriptStep[]): Script {
  return (_request, turn) => steps[turn] ?? { text: 'done' };
}

/** The scripted server: start it, point the client at `baseUrl`, read `modelRequests` afterwards. */
export class OpenAiResponsesProvider {
  private readonly server: RecordingServer;
  /** Scripting errors (no offered tool matched…): also answered as a 500 the client shows. */
  readonly failures: string[] = [];
  private turn = 0;

  constructor(private readonly script: Script) {
    this.server = new RecordingServer((request, res) => this.answer(request, res));
  }

  static async start(script: Script): Promise<OpenAiResponsesProvider> {
    const provider = new OpenAiResponsesProvider(script);
    await provider.server.start();
    return provider;
  }

  /** What a client's `base_url` is: `http://127.0.0.1:<port>/v1`. */
  get baseUrl(): string {
    return `${this.server.origin}/v1`;
  }

  /** Every request received, side calls included. */
  get requests(): readonly ProviderRequest[] {
    return this.server.requests;
  }

  /** The model requests (`POST …/responses`), in order, parsed. */
  get modelRequests(): ResponsesRequest[] {
    return this.server.requests.filter(isModelRequest).map(toResponsesRequest);
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  private answer(request: ProviderRequest, res: ServerResponse): void {
    if (!isModelRequest(request)) return answerSideCall(request, res);
    const parsed = toResponsesRequest(request);
    const turn = this.turn++;
    let step: ScriptStep;
    let item: Record<string, unknown>;
    try {
      step = this.script(parsed, turn);
      item =
        'text' in step
          ? messageItem(turn, step.text)
          : callItem(turn, matchTool(parsed.tools, step.toolCall.name), step.toolCall.arguments);
    } catch (error) {
      this.failures.push((error as Error).message);
      throw error;
    }
    streamResponse(res, `resp_${turn}`, item);
  }
}

function isModelRequest(request: ProviderRequest): boolean {
  return request.method === 'POST' && /\/responses(?:\?|$)/.test(request.path);
}

function toResponsesRequest(raw: ProviderRequest): ResponsesRequest {
  const body = (raw.body ?? {}) as ResponsesBody;
  const loaded = (body.input ?? []).flatMap((item) => (isSearchOutput(item) ? item.tools : []));
  return { body, tools: flattenTools([...(body.tools ?? []), ...loaded]), raw };
}

function isSearchOutput(item: unknown): item is { tools: WireTool[] } {
  const candidate = item as { type?: unknown; tools?: unknown } | null;
  return candidate?.type === 'tool_search_output' && Array.isArray(candidate.tools);
}

function flattenTools(tools: WireTool[]): OfferedTool[] {
  return tools.flatMap((tool): OfferedTool[] => {
    if (tool.type === 'tool_search')
      return [
        {
          fullName: 'tool_search',
          name: 'tool_search',
          search: true,
          description: tool.description,
          parameters: tool.parameters,
        },
      ];
    if (tool.type === 'namespace') {
      return (tool.tools ?? []).map((inner) => ({
        fullName: `${tool.name}__${inner.name}`,
        name: inner.name!,
        namespace: tool.name,
        description: inner.description,
        parameters: inner.parameters,
      }));
    }
    if (tool.type === 'function' && tool.name !== undefined)
      return [{ fullName: tool.name, name: tool.name, description: tool.description, parameters: tool.parameters }];
    return [];
  });
}

/** The offered tool a scripted name means: the same name, else the one whose full name ends in `__<name>`. */
export function matchTool(tools: OfferedTool[], wanted: string): OfferedTool {
  const exact = tools.filter((tool) => tool.fullName === wanted);
  const bySuffix = exact.length > 0 ? exact : tools.filter((tool) => tool.fullName.endsWith(`__${wanted}`));
  if (bySuffix.length === 1) return bySuffix[0];
  const offered = tools.map((tool) => tool.fullName).join(', ');
  if (bySuffix.length === 0)
    throw new Error(`the script calls '${wanted}', but the client offered no such tool (offered: ${offered})`);
  throw new Error(
    `the script calls '${wanted}', which matches several offered tools: ` +
      `${bySuffix.map((tool) => tool.fullName).join(', ')}`,
  );
}

function messageItem(turn: number, text: string): Record<string, unknown> {
  return {
    type: 'message',
    id: `msg_${turn}`,
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

function callItem(turn: number, tool: OfferedTool, args: Record<string, unknown>): Record<string, unknown> {
  if (tool.search)
    return {
      type: 'tool_search_call',
      id: `tsc_${turn}`,
      call_id: `call_${turn}`,
      execution: 'client',
      status: 'completed',
      arguments: args,
    };
  return {
    type: 'function_call',
    id: `fc_${turn}`,
    call_id: `call_${turn}`,
    name: tool.name,
    ...(tool.namespace === undefined ? {} : { namespace: tool.namespace }),
    arguments: JSON.stringify(args),
    status: 'completed',
  };
}

/** One response of one output item, as the Responses API streams it. */
function streamResponse(res: ServerResponse, id: string, item: Record<string, unknown>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: Record<string, unknown>) =>
    res.write(`event: ${event.type as string}\ndata: ${JSON.stringify(event)}\n\n`);
  const response = { id, object: 'response', status: 'in_progress', model: 'scripted', output: [] as unknown[] };
  send({ type: 'response.created', response });
  send({ type: 'response.in_progress', response });
  send({
    type: 'response.output_item.added',
    output_index: 0,
    item:
      item.type === 'message'
        ? { ...item, status: 'in_progress', content: [] }
        : item.type === 'function_call'
          ? { ...item, status: 'in_progress', arguments: '' }
          : item,
  });
  if (item.type === 'message') {
    const text = (item.content as { text: string }[])[0].text;
    send({
      type: 'response.content_part.added',
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    send({ type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text });
    send({ type: 'response.output_text.done', item_id: item.id, output_index: 0, content_index: 0, text });
    send({
      type: 'response.content_part.done',
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    });
  } else if (item.type === 'function_call') {
    send({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index: 0, delta: item.arguments });
    send({
      type: 'response.function_call_arguments.done',
      item_id: item.id,
      output_index: 0,
      arguments: item.arguments,
    });
  }
  send({ type: 'response.output_item.done', output_index: 0, item });
  send({
    type: 'response.completed',
    response: {
      ...response,
      status: 'completed',
      output: [item],
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 15,
      },
    },
  });
  res.end();
}

/** Anything but a model request (a model list, a probe): answered minimally, so the client goes on. */
function answerSideCall(request: ProviderRequest, res: ServerResponse): void {
  if (request.method === 'GET' && /\/models(?:\?|$)/.test(request.path)) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
    return;
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      error: {
        message: `the scripted provider has no ${request.method} ${request.path}`,
        type: 'invalid_request_error',
      },
    }),
  );
}
