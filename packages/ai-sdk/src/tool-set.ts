import { jsonSchema, type ToolSet, tool } from 'ai';

/** A tool as the model loop offers it: its wire name, description and JSON Schema. */
export interface LoopTool {
  wireName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface LoopToolCall {
  toolCallId: string;
  wireName: string;
  input: unknown;
}

/**
 * Tool definitions as an AI SDK tool set keyed by wire name, each call answered by `execute` (the
 * server's loop and `skillhost/ai-sdk` both build theirs with it).
 */
export function toolSetOf<T extends LoopTool>(
  definitions: readonly T[],
  execute: (call: LoopToolCall, definition: T) => Promise<string>,
): ToolSet {
  // No prototype: a model calling `constructor` or `toString` must find no tool, not Object's members.
  const tools: ToolSet = Object.create(null) as ToolSet;
  for (const definition of definitions) {
    tools[definition.wireName] = tool({
      description: definition.description,
      // No validator: arguments are checked by our executor, which answers the model with a readable error.
      inputSchema: jsonSchema<unknown>(definition.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (input: unknown, options: { toolCallId: string }) =>
        execute({ toolCallId: options.toolCallId, wireName: definition.wireName, input }, definition),
    });
  }
  return tools;
}
