import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request being handled, for the code its handler runs: its id (Fastify's `request.id`, sent
 * back as `x-request-id`) and its logger (Fastify's `request.log`, whose lines carry `reqId`). An
 * error that tells a member only "an admin can find the reason in the log" names the id to look
 * for. Nothing is bound outside a request (a GraphQL operation over a WebSocket, start-up work).
 */
export interface RequestScope {
  readonly id: string;
  readonly log: RequestLog;
}

/** Writes one line: its fields, then its message (pino's signature). */
type LogLine = (fields: object, message?: string) => void;

/** The request's logger as Skillhost writes to it: pino's `Logger` (bound by the HTTP layer) has this shape. */
export interface RequestLog {
  isLevelEnabled(level: string): boolean;
  trace: LogLine;
  debug: LogLine;
  info: LogLine;
  warn: LogLine;
  error: LogLine;
  fatal: LogLine;
}

const current = new AsyncLocalStorage<RequestScope>();

/** Runs `next` (and everything it starts) as part of the request. */
export function runInRequest(scope: RequestScope, next: () => void): void {
  current.run(scope, next);
}

export function currentRequestId(): string | undefined {
  return current.getStore()?.id;
}

export function currentRequestLogger(): RequestLog | undefined {
  return current.getStore()?.log;
}
