import { Injectable } from '@nestjs/common';

/**
 * The events of a turn, exactly as the SSE stream sends them: `tool-call`, `tool-result`,
 * `text-delta`, then `done` (the turn's answer) or `error` (`{code, message}`).
 */
export interface ChatEvent {
  event: 'tool-call' | 'tool-result' | 'text-delta' | 'done' | 'error';
  data: unknown;
}

/** A subscriber that falls this far behind is ended rather than let the queue grow without bound. */
const MAX_QUEUED_EVENTS = 10_000;

interface Subscriber {
  push(event: ChatEvent): void;
}

/**
 * Per-chat fan-out of turn events to live subscribers (GraphQL `chatEvents`), whichever API
 * started the turn. In-process: a subscriber sees the turns this instance runs.
 */
@Injectable()
export class ChatEventsService {
  private readonly subscribers = new Map<string, Set<Subscriber>>();

  hasSubscribers(chatId: string): boolean {
    return (this.subscribers.get(chatId)?.size ?? 0) > 0;
  }

  publish(chatId: string, event: ChatEvent): void {
    for (const subscriber of this.subscribers.get(chatId) ?? []) subscriber.push(event);
  }

  /** The chat's events from now on, until the consumer stops iterating (or falls too far behind). */
  subscribe(chatId: string): AsyncIterableIterator<ChatEvent> {
    const queue: ChatEvent[] = [];
    let waiting: ((result: IteratorResult<ChatEvent>) => void) | undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const set = this.subscribers.get(chatId);
      set?.delete(subscriber);
      if (set?.size === 0) this.subscribers.delete(chatId);
      waiting?.({ value: undefined, done: true });
      waiting = undefined;
    };
    const subscriber: Subscriber = {
      push(event) {
        if (ended) return;
        if (waiting !== undefined) {
          const resolve = waiting;
          waiting = undefined;
          resolve({ value: event, done: false });
        } else if (queue.length >= MAX_QUEUED_EVENTS) {
          end();
        } else {
          queue.push(event);
        }
      },
    };
    let set = this.subscribers.get(chatId);
    if (set === undefined) this.subscribers.set(chatId, (set = new Set()));
    set.add(subscriber);
    const iterator: AsyncIterableIterator<ChatEvent> = {
      next() {
        if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
        if (ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (waiting = resolve));
      },
      return() {
        end();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }
}
