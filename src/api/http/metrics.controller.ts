import { Controller, Get, Injectable, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, Public } from './decorators/auth.decorators.js';
import { MetricsService } from '../../infra/observability/metrics.service.js';

/** `GET /metrics`; who may call it is the subclass's decorator, chosen by `[app.metrics] public`. */
@Injectable()
class MetricsEndpoint {
  constructor(private readonly metrics: MetricsService) {}

  @Get('metrics')
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      "This instance's metrics in the Prometheus text format: requests, turns, tool calls, activations, " +
      'database errors, the skills snapshot, the process.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ schema: { type: 'string' } })
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    reply.header('content-type', this.metrics.contentType);
    return this.metrics.scrape();
  }
}

/** Needs an admin key while auth is on (the default). */
@Controller()
@AdminOnly()
@ApiTags('admin')
export class MetricsController extends MetricsEndpoint {}

/** `[app.metrics] public = true`: for a scraper without a key (keep the port private). */
@Controller()
@Public()
@ApiTags('health')
export class PublicMetricsController extends MetricsEndpoint {}
