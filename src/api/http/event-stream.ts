import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * A server-sent event stream on the reply, begun at once: status and headers (the reply's own included) go out before
 * the first event, as a client waiting for a slow model needs. The chat turns' stream and the gateway's share it.
 */
export interface EventStream {
  /** A message of `data:` alone (OpenAI's chat completion chunks). */
  data(value: unknown): void;
  /** A named event: `event:` and `data:` (a chat turn's events, OpenAI's responses events). */
  event(type: string, value: unknown): void;
  end(last?: string): void;
}

export function openEventStream(reply: FastifyReply): EventStream {
  const headers = {
    ...reply.getHeaders(),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  } as OutgoingHttpHeaders;
  reply.hijack();
  const raw: ServerResponse = reply.raw;
  raw.writeHead(200, headers);
  // A client that goes away mid-turn must not crash anything: the turn still completes and is stored.
  raw.on('error', () => undefined);
  // Pieces that come together (a model's chunks arrive several to a packet) go out in one write, not a syscall each.
  let corked = false;
  const write = (text: string) => {
    if (raw.destroyed || raw.writableEnded) return;
    if (!corked) {
      corked = true;
      raw.cork();
      setImmediate(() => {
        corked = false;
        raw.uncork();
      });
    }
    raw.write(text);
  };
  return {
    data: (value) => write(`data: ${JSON.stringify(value)}\n\n`),
    event: (type, value) => write(`event: ${type}\ndata: ${JSON.stringify(value)}\n\n`),
    end: (last) => {
      if (last !== undefined) write(last);
      if (!raw.destroyed && !raw.writableEnded) raw.end();
    },
  };
}
