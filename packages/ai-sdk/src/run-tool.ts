import { randomUUID } from 'node:crypto';
import type { ModelMessage } from 'ai';
import {
  AppError,
  parseToolArguments,
  type SkillTool,
  type StoredToolCard,
  type ToolContext,
  type ToolResult,
} from '@skillhost/core';

/** The user-visible record of one tool call: what was asked, how it went, what the model read. */
export type ToolCard = StoredToolCard;

export interface ToolExecution {
  card: ToolCard;
  /** The skill this call activated, when it activated one. */
  activated?: string;
  /** The version it activated (`sha256:…`), when it was kept. */
  version?: string;
}

/**
 * Runs one call of a skill tool and makes its card: bad arguments and domain errors (an unknown
 * skill, a path outside the folder) become an error card whose output the model can read, never an
 * exception. The server's tool service and `skillhost/ai-sdk` both run tools through this.
 */
export async function runSkillTool(
  tool: SkillTool,
  args: unknown,
  context: ToolContext,
  options: { id?: string; log?: (line: string) => void } = {},
): Promise<ToolExecution> {
  const started = performance.now();
  const card = (status: 'ok' | 'error', result: Omit<ToolResult, 'activated'>): ToolCard => ({
    id: options.id ?? randomUUID(),
    tool: tool.name,
    args: args ?? null,
    status,
    summary: result.summary,
    output: result.output,
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  });
  const failed = failedCallSummary(args);
  const parsed = parseToolArguments(tool, args);
  if (!parsed.ok) return { card: card('error', { output: parsed.message, summary: failed }) };
  try {
    const result = await tool.execute(parsed.input, context);
    options.log?.(`${tool.name} ${result.summary.skill ?? '-'}${result.summary.path ? ` ${result.summary.path}` : ''}`);
    return { card: card(result.failed ? 'error' : 'ok', result), activated: result.activated, version: result.version };
  } catch (error) {
    if (!AppError.isInstance(error)) throw error;
    options.log?.(`${tool.name} refused: ${error.code}`);
    return { card: card('error', { output: errorOutput(error), summary: failed }) };
  }
}

/** What a failed call's card shows: the skill and path it asked for, when it named them as strings. */
export function failedCallSummary(args: unknown): ToolCard['summary'] {
  const record = args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {};
  const skill =
    typeof record.name === 'string' ? record.name : typeof record.skill_name === 'string' ? record.skill_name : null;
  return { skill, ...(typeof record.path === 'string' ? { path: record.path } : {}), truncated: false };
}

export function errorOutput(error: AppError): string {
  return `Error (${error.code}): ${error.message}`;
}

/**
 * A call the server made for the model (an explicit `/name` activation), as the two messages the
 * model's history would hold had it made the call itself: its tool call, and the card's output.
 */
export function serverCallMessages(card: ToolCard, wireName: string, args: unknown): ModelMessage[] {
  return [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: card.id, toolName: wireName, input: args }] },
    {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: card.id, toolName: wireName, output: { type: 'text', value: card.output } },
      ],
    },
  ];
}
