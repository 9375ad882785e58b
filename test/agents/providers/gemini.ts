import type { ServerResponse } from 'node:http';
import { type ProviderRequest, RecordingServer } from './recording-server.js';

/**
 * A scripted Gemini API (`generativelanguage.googleapis.com`) on 127.0.0.1, as Gemini CLI calls it
 * through `@google/genai` once `GOOGLE_GEMINI_BASE_URL` points at it:
 *
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`: a model turn, answered as one SSE
 *   event (`data: <GenerateContentResponse>` and a blank line, the framing the SDK's
 *   `responseLineRE` reads);
 * - `POST /v1beta/models/<model>:generateContent`: the same answer as JSON;
 * - `POST /v1beta/models/<model>:countTokens`: a rough count (a side call, not a turn).
 *
 * A turn's answer comes from the script: `{ text }`, or `{ toolCall: { name, arguments } }` whose
 * name is matched by suffix to one of the function declarations the client offered
 * (`activate_team_skill` → `mcp_skillhost_activate_team_skill`). A name that matches no offered tool fails
 * the turn with a 400 naming the offered tools, so a wrong script shows in the agent's output and
 * in `failures`.
 *
 * Side calls the CLI makes with its own utility prompts (no function declarations offered: the
 * next-speaker check, loop detection, model routing, compression) are answered `{}` as JSON text
 * and kept out of `modelRequests`.
 */
export type GeminiStep = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

/** One model turn the client asked for: the request as sent, its model, and its JSON body. */
export interface GeminiModelRequest extends ProviderRequest {
  model: string;
  body: GenerateContentRequest;
}

/** What `(request, modelTurn) => step` is given: the turn's request, and its index (0 for the first turn). */
export type GeminiScript = (request: GeminiModelRequest, modelTurn: number) => GeminiStep;

/** The parts of a `GenerateContentRequest` a script or an assertion reads. */
export interface GenerateContentRequest {
  contents?: { role?: string; parts?: Record<string, unknown>[] }[];
  systemInstruction?: { parts?: { text?: string }[] } | string;
  tools?: {
    functionDeclarations?: {
      name: string;
      description?: string;
      parametersJsonSchema?: unknown;
      parameters?: unknown;
    }[];
  }[];
  generationConfig?: Record<string, unknown>;
}

const MODEL_CALL =
  /^\/v1(?:beta|alpha)?\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)(?:\?|$)/;

export class GeminiProvider {
  readonly server: RecordingServer;
  /** The model turns (requests offering tools), in order. */
  readonly modelRequests: GeminiModelRequest[] = [];
  /** Messages of the turns the script could not answer (an unknown tool name, a throwing script). */
  readonly failures: string[] = [];

  private constructor(private readonly script: GeminiScript) {
    this.server = new RecordingServer((request, res) => this.answer(request, res));
  }

  static async start(script: GeminiScript): Promise<GeminiProvider> {
    const provider = new GeminiProvider(script);
    await provider.server.start();
    return provider;
  }

  /** The base URL for `GOOGLE_GEMINI_BASE_URL` (`http://127.0.0.1:<port>`). */
  get url(): string {
    return this.server.origin;
  }

  /** Every request received, side calls included. */
  get requests(): readonly ProviderRequest[] {
    return this.server.requests;
  }

  stop(): Promise<void> {
    return this.server.stop();
  }

  /** The names of the functions the client offered in turn `index` (default: the first). */
  offeredTools(index = 0): string[] {
    return offeredToolNames(this.modelRequests[index]?.body ?? {});
  }

  private answer(request: ProviderRequest, res: ServerResponse): void {
    const call = MODEL_CALL.exec(request.path);
    if (request.method !== 'POST' || call === null) {
      // A model list or anything else the client might probe: nothing to offer.
      if (request.method === 'GET' && /^\/v1(?:beta|alpha)?\/models\/?(?:\?|$)/.test(request.path))
        return sendJson(res, 200, { models: [] });
      return sendJson(res, 404, {
        error: {
          code: 404,
          message: `The scripted Gemini API has no ${request.method} ${request.path}.`,
          status: 'NOT_FOUND',
        },
      });
    }
    const [, model, method] = call;
    const body = (request.body ?? {}) as GenerateContentRequest;
    if (method === 'countTokens') return sendJson(res, 200, { totalTokens: Math.ceil(request.raw.length / 4) });
    if (offeredToolNames(body).length === 0) return this.send(res, method, response({ text: '{}' }));
    const turn: GeminiModelRequest = { ...request, model, body };
    this.modelRequests.push(turn);
    let part: Record<string, unknown>;
    try {
      part = this.partFor(this.script(turn, this.modelRequests.length - 1), body);
    } catch (error) {
      // A 400, as the Gemini API answers a bad request: the CLI shows it and does not retry (a 500 is retried with
      // backoff).
      const message = `scripted provider failed: ${(error as Error).message}`;
      this.failures.push(message);
      return sendJson(res, 400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    }
    this.send(res, method, response(part));
  }

  private partFor(step: GeminiStep, body: GenerateContentRequest): Record<string, unknown> {
    if ('text' in step) return { text: step.text };
    return {
      functionCall: { name: matchTool(step.toolCall.name, offeredToolNames(body)), args: step.toolCall.arguments },
    };
  }

  private send(res: ServerResponse, method: string, payload: unknown): void {
    if (method === 'generateContent') return sendJson(res, 200, payload);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(`data: ${JSON.stringify(payload)}\r\n\r\n`);
  }
}

function offeredToolNames(body: GenerateContentRequest): string[] {
  return (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name));
}

/**
 * The offered tool a scripted name means: the name itself or a name ending in `_<name>` (MCP tools
 * are offered as `mcp_<server>_<tool>`). A client's own tool of the same name (Gemini CLI has a
 * built-in `activate_skill`) loses to the prefixed MCP one, the one a script about Skillhost means.
 */
export function matchTool(scripted: string, offered: readonly string[]): string {
  const matches = offered.filter((name) => name === scripted || name.endsWith(`_${scripted}`));
  const prefixed = matches.filter((name) => name !== scripted);
  const chosen = prefixed.length > 0 ? prefixed : matches;
  if (chosen.length === 1) return chosen[0];
  const problem = chosen.length === 0 ? 'no offered tool' : `${chosen.length} offered tools (${chosen.join(', ')})`;
  throw new Error(
    `The script calls '${scripted}', which matches ${problem}; the client offered: ` +
      `${offered.join(', ') || 'no tools'}.`,
  );
}

function response(part: Record<string, unknown>) {
  return {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    modelVersion: 'scripted',
    responseId: `scripted-${Date.now()}`,
  };
}

function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(payload));
}
