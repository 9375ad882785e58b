import { createHash } from 'node:crypto';
import type { ModelMessage } from 'ai';
import { validationFailed } from '../../shared/validation-errors.js';

/**
 * A conversation as a client of the OpenAI-compatible gateway sends it, in neither of OpenAI's two wire formats: the
 * chat completions' messages and the responses' input items both become these, and a stored response keeps them.
 * Skillhost's own tool calls never appear here: clients do not see them, and do not send them back.
 */
export type ConversationItem =
  | { type: 'system'; text: string }
  | { type: 'user'; text: string }
  | { type: 'assistant'; text: string }
  /**
   * A call of one of the client's tools, as the model made it (`arguments`: its JSON text); `namespace` for a tool of a
   * responses client's namespace (Codex's MCP servers), which the model knows as `<namespace>__<name>`.
   */
  | { type: 'tool-call'; callId: string; name: string; namespace?: string; arguments: string }
  | { type: 'tool-result'; callId: string; output: string };

/** Where a conversation's new input starts: after its last assistant item (the prior turns are before it). */
export function newInputStart(items: readonly ConversationItem[]): number {
  for (let index = items.length - 1; index >= 0; index--)
    if (items[index].type === 'assistant' || items[index].type === 'tool-call') return index + 1;
  return 0;
}

/**
 * What identifies a conversation a stateless client resends: a digest of its user and assistant texts, the client's
 * tool calls (name and arguments) and their results, in order. System prompts are left out (clients put the date or
 * their settings there, which change between requests), as are call ids and white space around texts. Empty for an
 * empty history: a first message never continues anything.
 */
export function conversationFingerprint(items: readonly ConversationItem[]): string | undefined {
  const visible = items.filter((item) => item.type !== 'system');
  if (visible.length === 0) return undefined;
  const hash = createHash('sha256');
  for (const item of visible) {
    switch (item.type) {
      case 'user':
      case 'assistant':
        hash.update(JSON.stringify([item.type, item.text.trim()]));
        break;
      case 'tool-call':
        hash.update(JSON.stringify([item.type, toolWireName(item), canonicalJson(item.arguments)]));
        break;
      case 'tool-result':
        hash.update(JSON.stringify([item.type, item.output.trim()]));
        break;
    }
    hash.update('\n');
  }
  return hash.digest('hex');
}

/** JSON text as one canonical string (key order kept, white space dropped); text that is not JSON, as it is. */
function canonicalJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.trim();
  }
}

/**
 * The items as the model reads them: an assistant's text and the calls after it are one message, and consecutive
 * results one tool message. A result must answer a call made before it (VALIDATION_FAILED naming the item otherwise).
 */
export function modelMessagesOf(items: readonly ConversationItem[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  const callNames = new Map<string, string>();
  items.forEach((item, index) => {
    const last = messages[messages.length - 1];
    switch (item.type) {
      case 'system':
        messages.push({ role: 'system', content: item.text });
        return;
      case 'user':
        messages.push({ role: 'user', content: item.text });
        return;
      case 'assistant':
        messages.push({ role: 'assistant', content: [{ type: 'text', text: item.text }] });
        return;
      case 'tool-call': {
        const toolName = toolWireName(item);
        callNames.set(item.callId, toolName);
        const part = { type: 'tool-call' as const, toolCallId: item.callId, toolName, input: parsed(item) };
        if (last?.role === 'assistant' && Array.isArray(last.content)) last.content.push(part);
        else messages.push({ role: 'assistant', content: [part] });
        return;
      }
      case 'tool-result': {
        const name = callNames.get(item.callId);
        if (name === undefined)
          throw validationFailed([
            `item ${index}: a tool result for the call '${item.callId.slice(0, 100)}', which no earlier assistant ` +
              'message made',
          ]);
        const part = {
          type: 'tool-result' as const,
          toolCallId: item.callId,
          toolName: name,
          output: { type: 'text' as const, value: item.output },
        };
        if (last?.role === 'tool') last.content.push(part);
        else messages.push({ role: 'tool', content: [part] });
        return;
      }
    }
  });
  return messages;
}

/** The name the model knows a client's tool by: a namespace's tools as `<namespace>__<name>`. */
export function toolWireName(call: { name: string; namespace?: string }): string {
  return call.namespace === undefined ? call.name : `${call.namespace}__${call.name}`;
}

/** A call's arguments as the provider will send them again: the JSON they were, or the text when they were not JSON. */
function parsed(call: { arguments: string }): unknown {
  try {
    return JSON.parse(call.arguments);
  } catch {
    return call.arguments;
  }
}
