import { z } from 'zod';
import type { ConversationItem } from '../../domain/chats/gateway/conversation-items.js';
import type { GatewayRequest, ItemReference } from '../../domain/chats/gateway/gateway.service.js';
import type { LoopTool, ModelCallOptions } from '../../domain/chats/llm/tool-loop.js';
import { validationFailed } from '../../domain/shared/validation-errors.js';
import type { GatewayConfig } from '../../config/app-config.js';
import { parseItemId } from './openai-presenter.js';

/**
 * OpenAI's two request formats (chat completions and responses) read into the gateway's one request. Fields OpenAI
 * defines that change nothing here (`seed`, `logprobs`, `parallel_tool_calls`, `service_tier`, `reasoning_effort`…)
 * are accepted and left alone, as OpenAI-compatible servers do, so clients that always send them keep working; what
 * would silently change the answer (`n` > 1, audio, images, namespaces and unknown tool types) is refused by name.
 * Built-in tool types that no function can stand for are left out of what the model is offered (`isBuiltInTool`).
 */

/** OpenAI's rule for function names. */
const TOOL_NAME = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -');
const MAX_STOP_SEQUENCES = 4;

const textPart = z.object({ type: z.literal('text'), text: z.string() }).passthrough();
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() }).passthrough();
const unsupportedPart = z
  .object({ type: z.enum(['image_url', 'input_audio', 'file', 'input_image', 'input_file']) })
  .passthrough();
const userPart = z.union([textPart, unsupportedPart]);

const functionSpec = z
  .object({
    name: TOOL_NAME,
    description: z.string().max(100_000).optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  })
  .passthrough();

const toolCall = z
  .object({
    id: z.string().min(1).max(200),
    type: z.literal('function').optional(),
    function: z.object({ name: z.string().min(1).max(200), arguments: z.string() }).passthrough(),
  })
  .passthrough();

const chatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: z.union([z.string(), z.array(textPart)]) }).passthrough(),
  z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(userPart)]) }).passthrough(),
  z
    .object({
      role: z.literal('assistant'),
      content: z.union([z.string(), z.array(z.union([textPart, refusalPart]))]).nullish(),
      tool_calls: z.array(toolCall).optional(),
    })
    .passthrough(),
  z
    .object({
      role: z.literal('tool'),
      tool_call_id: z.string().min(1).max(200),
      content: z.union([z.string(), z.array(textPart)]),
    })
    .passthrough(),
]);

const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: TOOL_NAME }) }).passthrough(),
]);

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).passthrough(),
  z.object({ type: z.literal('json_object') }).passthrough(),
  z
    .object({
      type: z.literal('json_schema'),
      json_schema: z
        .object({
          name: z.string().max(64),
          description: z.string().optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
        })
        .passthrough(),
    })
    .passthrough(),
]);

const metadata = z.record(z.string(), z.string().max(512)).optional();

const commonOptions = {
  model: z.string().min(1).max(200),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stream: z.boolean().nullish(),
  metadata,
  user: z.string().max(256).optional(),
};

const chatCompletionRequest = z
  .object({
    ...commonOptions,
    messages: z.array(chatMessage).min(1),
    tools: z.array(z.object({ type: z.literal('function'), function: functionSpec }).passthrough()).optional(),
    tool_choice: toolChoice.optional(),
    max_tokens: z.number().int().min(1).nullish(),
    max_completion_tokens: z.number().int().min(1).nullish(),
    stop: z.union([z.string(), z.array(z.string()).max(MAX_STOP_SEQUENCES)]).nullish(),
    response_format: responseFormat.optional(),
    n: z.literal(1, { message: 'only n = 1 is supported: send one request per answer' }).nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullish(),
    audio: z.null({ message: 'audio output is not supported by this gateway' }).optional(),
  })
  .passthrough();

const inputText = z.object({ type: z.enum(['input_text', 'output_text', 'text']), text: z.string() }).passthrough();
const inputContent = z.union([z.string(), z.array(z.union([inputText, refusalPart, unsupportedPart]))]);

const inputItem = z.union([
  z
    .object({
      type: z.literal('message').optional(),
      role: z.enum(['user', 'assistant', 'system', 'developer']),
      content: inputContent,
    })
    .passthrough(),
  z
    .object({
      type: z.literal('function_call'),
      call_id: z.string().min(1).max(200),
      name: z.string().min(1).max(200),
      namespace: z.string().min(1).max(200).nullish(),
      arguments: z.string(),
    })
    .passthrough(),
  z
    .object({
      type: z.literal('function_call_output'),
      call_id: z.string().min(1).max(200),
      output: z.union([z.string(), z.array(inputText)]),
    })
    .passthrough(),
  // Reasoning and other items a client keeps from earlier answers: not sent to the model again.
  z.object({ type: z.literal('reasoning') }).passthrough(),
  z.object({ type: z.literal('item_reference'), id: z.string().min(1).max(200) }).passthrough(),
]);

const responsesFunctionTool = z
  .object({
    type: z.literal('function'),
    name: TOOL_NAME,
    description: z.string().max(100_000).nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  })
  .passthrough();

const responsesRequest = z
  .object({
    ...commonOptions,
    input: z.union([z.string(), z.array(inputItem)]),
    instructions: z.string().nullish(),
    tools: z.array(z.object({ type: z.string() }).passthrough()).optional(),
    tool_choice: z
      .union([
        z.enum(['none', 'auto', 'required']),
        z.object({ type: z.literal('function'), name: TOOL_NAME }).passthrough(),
      ])
      .optional(),
    max_output_tokens: z.number().int().min(1).nullish(),
    previous_response_id: z.string().min(1).max(200).nullish(),
    store: z.boolean().nullish(),
    text: z
      .object({
        format: z
          .discriminatedUnion('type', [
            z.object({ type: z.literal('text') }).passthrough(),
            z.object({ type: z.literal('json_object') }).passthrough(),
            z
              .object({
                type: z.literal('json_schema'),
                name: z.string().max(64),
                description: z.string().optional(),
                schema: z.record(z.string(), z.unknown()).optional(),
              })
              .passthrough(),
          ])
          .optional(),
      })
      .passthrough()
      .nullish(),
  })
  .passthrough();

/** A chat completions request, read: the gateway's request, and how to answer it. */
export interface ChatCompletionCall {
  request: GatewayRequest;
  stream: boolean;
  includeUsage: boolean;
}

/** A responses request, read. */
export interface ResponsesCall {
  request: GatewayRequest;
  stream: boolean;
}

/** What a request may carry besides its body: `X-Skillhost-Conversation`. */
export interface GatewayHeaders {
  conversation?: string;
}

export function readChatCompletion(body: unknown, headers: GatewayHeaders, limits: GatewayConfig): ChatCompletionCall {
  const parsed = parse(chatCompletionRequest, body);
  if (parsed.messages.length > limits.maxMessages)
    throw validationFailed([`messages: at most ${limits.maxMessages} messages a request ([app.gateway] max_messages)`]);
  const items = parsed.messages.flatMap((message, index) => chatItems(message, index));
  const tools = clientTools(
    (parsed.tools ?? []).map((tool) => tool.function),
    limits,
  );
  const choice = parsed.tool_choice;
  const format = parsed.response_format;
  const options: ModelCallOptions = {
    ...sampling(parsed),
    maxOutputTokens: parsed.max_completion_tokens ?? parsed.max_tokens ?? undefined,
    stopSequences: parsed.stop == null ? undefined : [parsed.stop].flat(),
    toolChoice: choice === undefined || typeof choice === 'string' ? choice : { toolName: choice.function.name },
    responseFormat: jsonFormat(format?.type === 'json_schema' ? { type: format.type, ...format.json_schema } : format),
  };
  checkToolChoice(options, tools, 'tool_choice.function.name');
  return {
    request: {
      model: parsed.model,
      items,
      tools,
      options,
      conversationId: headers.conversation ?? parsed.metadata?.skillhost_conversation,
    },
    stream: parsed.stream === true,
    includeUsage: parsed.stream_options?.include_usage === true,
  };
}

export function readResponses(body: unknown, headers: GatewayHeaders, limits: GatewayConfig): ResponsesCall {
  const parsed = parse(responsesRequest, body);
  const input = typeof parsed.input === 'string' ? [{ role: 'user' as const, content: parsed.input }] : parsed.input;
  if (input.length > limits.maxMessages)
    throw validationFailed([`input: at most ${limits.maxMessages} items a request ([app.gateway] max_messages)`]);
  const items: (ConversationItem | ItemReference)[] = [];
  for (const [index, item] of input.entries()) items.push(...responseItems(item, index));
  const functions = (parsed.tools ?? []).flatMap((tool, index) => responsesTools(tool, `tools.${index}`));
  const tools = clientTools(functions, limits);
  const namespaced = new Map(
    functions.flatMap((tool) => (tool.origin === undefined ? [] : [[tool.name, tool.origin] as const])),
  );
  const choice = parsed.tool_choice;
  const format = parsed.text?.format;
  const options: ModelCallOptions = {
    ...sampling(parsed),
    maxOutputTokens: parsed.max_output_tokens ?? undefined,
    toolChoice: choice === undefined || typeof choice === 'string' ? choice : { toolName: choice.name },
    responseFormat: jsonFormat(format),
  };
  checkToolChoice(options, tools, 'tool_choice.name');
  return {
    request: {
      model: parsed.model,
      items,
      tools,
      options,
      namespaced,
      conversationId: headers.conversation ?? parsed.metadata?.skillhost_conversation,
      previousResponseId: parsed.previous_response_id ?? undefined,
      response: { instructions: parsed.instructions ?? null, store: parsed.store !== false },
    },
    stream: parsed.stream === true,
  };
}

/**
 * Tool types of the Responses API that no function can stand for: tools OpenAI runs itself (`web_search…`,
 * `file_search`, `code_interpreter`, `image_generation`, `mcp`, `computer_use…`, `tool_search`), built-ins the model
 * was trained on with no schema sent (`local_shell`, `shell`, `apply_patch`), and `custom` tools, whose input is free
 * text under a grammar rather than JSON. The model behind the gateway is offered functions only, so these are left
 * out rather than refused: agents send them by default (Codex 0.171.0 sends `web_search` unless
 * `web_search = "disabled"`, and `apply_patch` as `custom` for its own models), and the rest of their request still
 * works. `namespace` is not among them: it holds function tools, so it stays refused until the gateway offers them.
 */
const BUILT_IN_TOOL = new Set([
  'local_shell',
  'shell',
  'apply_patch',
  'custom',
  'file_search',
  'code_interpreter',
  'image_generation',
  'mcp',
  'tool_search',
  'computer_use',
  'computer_use_preview',
]);

const responsesNamespace = z
  .object({
    type: z.literal('namespace'),
    name: z.string().min(1).max(64),
    tools: z.array(z.object({ type: z.string() }).passthrough()),
  })
  .passthrough();

/** A function the model is offered; `origin` for one of a namespace, which the client knows by its own name. */
interface FunctionSpec {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  origin?: { namespace: string; name: string };
}

/**
 * A responses tool as the functions the model is offered: a function as it is; a namespace's functions (Codex sends
 * its MCP servers' tools and its agents' tools so) each as `<namespace>__<name>`, which calls are split back into;
 * OpenAI's built-in tools, which no other model runs, left out.
 */
function responsesTools(tool: { type: string } & Record<string, unknown>, path: string): FunctionSpec[] {
  if (isBuiltInTool(tool.type)) return [];
  if (tool.type === 'namespace') {
    const read = responsesNamespace.safeParse(tool);
    if (!read.success) throw validationFailed([`${path}: ${issuesText(read.error)}`]);
    const namespace = read.data.name;
    return read.data.tools.flatMap((inner, index) => {
      if (inner.type === 'namespace')
        throw validationFailed([`${path}.tools.${index}.type: a namespace inside a namespace is not supported`]);
      return responsesTools(inner, `${path}.tools.${index}`).map((spec) => {
        const name = `${namespace}__${spec.name}`;
        if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name))
          throw validationFailed([
            `${path}.tools.${index}.name: '${name.slice(0, 100)}', as the model would know it, must be 1 to 64 ` +
              'letters, digits, _ or -',
          ]);
        return { ...spec, name, origin: { namespace, name: spec.name } };
      });
    });
  }
  const read = responsesFunctionTool.safeParse(tool);
  if (!read.success)
    throw validationFailed([
      tool.type === 'function'
        ? `${path}: ${issuesText(read.error)}`
        : `${path}.type: '${tool.type.slice(0, 50)}' tools are not supported by this gateway; send function tools`,
    ]);
  return [
    {
      name: read.data.name,
      description: read.data.description ?? undefined,
      parameters: read.data.parameters ?? undefined,
    },
  ];
}

function isBuiltInTool(type: string): boolean {
  return BUILT_IN_TOOL.has(type) || /^web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?$/.test(type);
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw validationFailed(['body: send a JSON object']);
  const result = schema.safeParse(body);
  if (!result.success) throw validationFailed(issueProblems(result.error));
  return result.data;
}

/** The first problems, each as `path: what is wrong`. */
function issueProblems(error: z.ZodError): string[] {
  return error.issues.slice(0, 10).map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`);
}

function issuesText(error: z.ZodError): string {
  return issueProblems(error).join('; ');
}

/**
 * The JSON output a request asks for, from either API's format (chat completions nest a schema's fields under
 * `json_schema`; the caller lifts them): any JSON object, or one matching a schema; undefined for text.
 */
function jsonFormat(
  format: { type: string; name?: string; description?: string; schema?: Record<string, unknown> } | undefined,
): ModelCallOptions['responseFormat'] {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json' };
  return { type: 'json', name: format.name, description: format.description, schema: format.schema };
}

function sampling(parsed: { temperature?: number | null; top_p?: number | null }): ModelCallOptions {
  return { temperature: parsed.temperature ?? undefined, topP: parsed.top_p ?? undefined };
}

function clientTools(
  functions: { name: string; description?: string; parameters?: Record<string, unknown> }[],
  limits: GatewayConfig,
): LoopTool[] {
  if (functions.length > limits.maxTools)
    throw validationFailed([`tools: at most ${limits.maxTools} tools a request ([app.gateway] max_tools)`]);
  const seen = new Set<string>();
  return functions.map((spec, index) => {
    if (seen.has(spec.name)) throw validationFailed([`tools.${index}: a second tool named '${spec.name}'`]);
    seen.add(spec.name);
    return {
      wireName: spec.name,
      description: spec.description ?? '',
      inputSchema: spec.parameters ?? { type: 'object', properties: {} },
    };
  });
}

function checkToolChoice(options: ModelCallOptions, tools: readonly LoopTool[], path: string): void {
  const choice = options.toolChoice;
  if (typeof choice === 'object' && !tools.some((tool) => tool.wireName === choice.toolName))
    throw validationFailed([`${path}: no tool of this request is named '${choice.toolName}'`]);
}

/** The text of a message's content: a string, or its text parts joined (images and audio are refused). */
function textOf(
  content: string | readonly ({ type: string; text?: string; refusal?: string } & Record<string, unknown>)[],
  path: string,
): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, index) => {
      if (typeof part.text === 'string') return part.text;
      if (typeof part.refusal === 'string') return part.refusal;
      throw validationFailed([
        `${path}.${index}.type: '${part.type}' content is not supported by this gateway; send text`,
      ]);
    })
    .join('\n');
}

function chatItems(message: z.output<typeof chatMessage>, index: number): ConversationItem[] {
  const path = `messages.${index}.content`;
  switch (message.role) {
    case 'system':
    case 'developer':
      return [{ type: 'system', text: textOf(message.content, path) }];
    case 'user':
      return [{ type: 'user', text: textOf(message.content, path) }];
    case 'assistant': {
      const text = message.content == null ? '' : textOf(message.content, path);
      const calls: ConversationItem[] = (message.tool_calls ?? []).map((call) => ({
        type: 'tool-call',
        callId: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      }));
      return text === '' ? calls : [{ type: 'assistant', text }, ...calls];
    }
    case 'tool':
      return [{ type: 'tool-result', callId: message.tool_call_id, output: textOf(message.content, path) }];
  }
}

function responseItems(item: z.output<typeof inputItem>, index: number): (ConversationItem | ItemReference)[] {
  const path = `input.${index}`;
  if (item.type === 'reasoning') return [];
  if (item.type === 'item_reference') return [{ type: 'item-reference', id: item.id, ...parseItemId(item.id) }];
  if (item.type === 'function_call')
    return [
      {
        type: 'tool-call',
        callId: item.call_id,
        name: item.name,
        ...(item.namespace ? { namespace: item.namespace } : {}),
        arguments: item.arguments,
      },
    ];
  if (item.type === 'function_call_output')
    return [{ type: 'tool-result', callId: item.call_id, output: textOf(item.output, `${path}.output`) }];
  const text = textOf(item.content, `${path}.content`);
  switch (item.role) {
    case 'system':
    case 'developer':
      return [{ type: 'system', text }];
    case 'user':
      return [{ type: 'user', text }];
    case 'assistant':
      return text === '' ? [] : [{ type: 'assistant', text }];
  }
}
