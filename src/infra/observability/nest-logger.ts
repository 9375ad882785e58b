import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';
import { currentRequestLogger } from '../../domain/shared/request-scope.js';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Nest's own progress lines (each module initialised, each route mapped: a hundred lines a start)
 * are debug lines: the server's start-up summary says what a person needs.
 */
const FRAMEWORK_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
  'GraphQLModule',
]);

/**
 * Nest's `LoggerService` over the app's pino logger: `new Logger(context).warn(…)` anywhere
 * writes one pino line with `context`, and inside a request through that request's logger, so
 * the line carries its `reqId`. Nest passes the context as the last argument; its exception
 * handlers pass a stack as a string before it.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.write(FRAMEWORK_CONTEXTS.has(rest[rest.length - 1] as string) ? 'debug' : 'info', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    const logger = currentRequestLogger() ?? this.root;
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    // Nest's Logger passes an absent stack as `undefined` before the context: nothing to write.
    const extra = rest.length > 0 ? rest.slice(0, -1).filter((part) => part !== undefined) : [];
    if (rest.length > 0) fields.context = rest[rest.length - 1];
    if (message instanceof Error) {
      fields.err = message;
      logger[level](fields, message.message);
    } else if (typeof message === 'object' && message !== null) {
      logger[level](Object.assign(fields, message));
    } else if (level === 'error' && extra.length === 1 && typeof extra[0] === 'string' && /\n\s*at /.test(extra[0])) {
      fields.err = { message: String(message), stack: extra[0] };
      logger[level](fields, String(message));
    } else {
      logger[level](fields, [message, ...extra].map(String).join(' '));
    }
  }
}
