import type { ConversationItem } from '../../domain/chats/gateway/conversation-items.js';
import type { presentOpenAIError } from '../errors/openai-error.js';
import { type presentResponse, responseOutput } from './openai-presenter.js';

type Send = (type: string, data: Record<string, unknown>) => void;

/**
 * A streamed response's events, in the order OpenAI sends them: `response.created` and `response.in_progress`; for
 * the answer's text, its message item added, its part added, the text's deltas, then each done; for each call of a
 * client tool, its item added, its arguments (whole, in one delta) and done; `response.completed` with the whole
 * response. Every event has its `sequence_number`.
 */
export class ResponseEvents {
  private sequence = 0;
  private messageOpen = false;

  constructor(
    private readonly responseId: string,
    private readonly out: Send,
  ) {}

  private send(type: string, data: Record<string, unknown>): void {
    this.out(type, { type, sequence_number: this.sequence++, ...data });
  }

  created(response: ReturnType<typeof presentResponse>): void {
    this.send('response.created', { response });
    this.send('response.in_progress', { response });
  }

  /** A piece of the answer's text: the message item opens with the first. */
  text(delta: string): void {
    if (delta === '') return;
    if (!this.messageOpen) this.openMessage();
    this.send('response.output_text.delta', {
      item_id: this.messageId(),
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  /** The stream's end: the open message closed, the client's calls, and the whole response. */
  completed(output: readonly ConversationItem[], response: ReturnType<typeof presentResponse>): void {
    const items = responseOutput({ id: this.responseId, output: [...output] });
    items.forEach((item, index) => {
      if (item.type === 'message') {
        if (!this.messageOpen) this.openMessage();
        const part = item.content[0];
        // The item's id is the one the stream opened with: the text streamed is the text kept.
        const done = { ...item, id: this.messageId() };
        this.send('response.output_text.done', {
          item_id: done.id,
          output_index: index,
          content_index: 0,
          text: part.text,
          logprobs: [],
        });
        this.send('response.content_part.done', { item_id: done.id, output_index: index, content_index: 0, part });
        this.send('response.output_item.done', { output_index: index, item: done });
        return;
      }
      this.send('response.output_item.added', {
        output_index: index,
        item: { ...item, arguments: '', status: 'in_progress' },
      });
      this.send('response.function_call_arguments.delta', {
        item_id: item.id,
        output_index: index,
        delta: item.arguments,
      });
      this.send('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      });
      this.send('response.output_item.done', { output_index: index, item });
    });
    this.send('response.completed', { response });
  }

  /** A failure after the stream began: OpenAI's `error` event. */
  failed(error: ReturnType<typeof presentOpenAIError>): void {
    this.send('error', { ...error.error });
  }

  /** The message item's id: the answer's text is always the response's first output (see responseOutput). */
  private messageId(): string {
    return `msg_${this.responseId.slice('resp_'.length)}_0`;
  }

  private openMessage(): void {
    this.messageOpen = true;
    this.send('response.output_item.added', {
      output_index: 0,
      item: { type: 'message', id: this.messageId(), status: 'in_progress', role: 'assistant', content: [] },
    });
    this.send('response.content_part.added', {
      item_id: this.messageId(),
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
  }
}
