import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { principalIdOf } from '../../infra/observability/http-context.js';
import { REQUEST_ID_HEADER } from '../../infra/observability/logging.js';
import { MetricsService, UNMATCHED_ROUTE } from '../../infra/observability/metrics.service.js';

/** The one log line of a request: what was called, how it ended, for whom. No headers, no bodies. */
export interface RequestLine {
  method: string;
  route: string;
  path: string;
  status: number;
  durationMs: number;
  principalId: string | null;
}

export function requestLineOf(request: FastifyRequest, reply: FastifyReply): RequestLine {
  const query = request.url.indexOf('?');
  return {
    method: request.method,
    route: request.routeOptions.url ?? UNMATCHED_ROUTE,
    // Without the query string: the one place a confused client might put a key.
    path: query === -1 ? request.url : request.url.slice(0, query),
    status: reply.statusCode,
    durationMs: Math.round(reply.elapsedTime * 100) / 100,
    principalId: principalIdOf(request),
  };
}

/**
 * Watches every request Fastify serves (REST, GraphQL, the documentation, unknown routes): echoes
 * its id in `x-request-id`, and when it is answered writes its log line and its metric.
 */
@Injectable()
export class RequestObserver implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly metrics: MetricsService,
  ) {}

  /** Before `ready()`: Fastify gives every route the hooks its instance has by then. */
  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', (request, reply, done) => {
      // On the raw response, so a streamed answer (which writes its own head) carries it too.
      reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
      done();
    });
    fastify.addHook('onResponse', (request, reply, done) => {
      const line = requestLineOf(request, reply);
      this.metrics.observeRequest(line);
      if (line.status >= 500) request.log.error(line, 'request failed');
      else request.log.info(line, 'request completed');
      done();
    });
  }
}
