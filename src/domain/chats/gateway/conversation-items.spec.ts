import { describe, expect, it } from '@jest/globals';
import { AppError } from '@skillhost/core';
import {
  type ConversationItem,
  conversationFingerprint,
  modelMessagesOf,
  newInputStart,
} from './conversation-items.js';

const user = (text: string): ConversationItem => ({ type: 'user', text });
const assistant = (text: string): ConversationItem => ({ type: 'assistant', text });

describe(conversationFingerprint.name, () => {
  it('is the same for the same texts, whatever the system prompt, call ids and white space around texts', () => {
    const sent: ConversationItem[] = [
      { type: 'system', text: 'Today is Monday.' },
      user('hi'),
      assistant('Hello!'),
      { type: 'tool-call', callId: 'call_1', name: 'lookup', arguments: '{"q": "x"}' },
      { type: 'tool-result', callId: 'call_1', output: 'found' },
    ];
    const resent: ConversationItem[] = [
      { type: 'system', text: 'Today is Tuesday.' },
      user('hi\n'),
      assistant(' Hello!'),
      { type: 'tool-call', callId: 'call_other', name: 'lookup', arguments: '{"q":"x"}' },
      { type: 'tool-result', callId: 'call_other', output: 'found' },
    ];
    expect(conversationFingerprint(resent)).toBe(conversationFingerprint(sent));
  });

  it('differs when any text, role, order or argument differs', () => {
    const base = conversationFingerprint([user('hi'), assistant('Hello!')]);
    expect(conversationFingerprint([user('hi'), assistant('Hello?')])).not.toBe(base);
    expect(conversationFingerprint([assistant('hi'), user('Hello!')])).not.toBe(base);
    expect(conversationFingerprint([user('Hello!'), assistant('hi')])).not.toBe(base);
    // Texts cannot run into each other: ["ab", ""] is not ["a", "b"].
    expect(conversationFingerprint([user('ab'), user('')])).not.toBe(conversationFingerprint([user('a'), user('b')]));
  });

  it('is undefined for a conversation with nothing but system prompts: a first message continues nothing', () => {
    expect(conversationFingerprint([])).toBeUndefined();
    expect(conversationFingerprint([{ type: 'system', text: 'x' }])).toBeUndefined();
  });
});

describe(newInputStart.name, () => {
  it('is after the last assistant item: the new user message, or the results of client tools', () => {
    expect(newInputStart([user('a')])).toBe(0);
    expect(newInputStart([user('a'), assistant('b'), user('c')])).toBe(2);
    expect(
      newInputStart([
        user('a'),
        { type: 'tool-call', callId: '1', name: 't', arguments: '{}' },
        { type: 'tool-result', callId: '1', output: 'r' },
      ]),
    ).toBe(2);
  });
});

describe(modelMessagesOf.name, () => {
  it("joins an assistant's text and its calls, and consecutive results, as the model reads them", () => {
    const messages = modelMessagesOf([
      { type: 'system', text: 'S' },
      user('u'),
      assistant('thinking'),
      { type: 'tool-call', callId: 'c1', name: 'a', arguments: '{"x":1}' },
      { type: 'tool-call', callId: 'c2', name: 'b', arguments: 'not json' },
      { type: 'tool-result', callId: 'c1', output: 'one' },
      { type: 'tool-result', callId: 'c2', output: 'two' },
    ]);
    expect(messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'u' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'thinking' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: { x: 1 } },
          // Arguments that are not JSON reach the model as the text they were.
          { type: 'tool-call', toolCallId: 'c2', toolName: 'b', input: 'not json' },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'a', output: { type: 'text', value: 'one' } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'b', output: { type: 'text', value: 'two' } },
        ],
      },
    ]);
  });

  it('refuses a result for a call no earlier assistant message made, naming the item', () => {
    const refuse = () => modelMessagesOf([user('u'), { type: 'tool-result', callId: 'ghost', output: 'x' }]);
    expect(refuse).toThrow(AppError);
    expect(refuse).toThrow("item 1: a tool result for the call 'ghost'");
  });
});
