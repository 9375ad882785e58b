import { Controller, Get, Header, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type HealthCheckResult, HealthCheckService, type HealthIndicatorFunction } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import { Public } from './decorators/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { PROCESS_ROLE, type ProcessRole } from '../../config/process-role.js';
import { HealthDto, HealthReportDto } from './dto/health.dto.js';
import { NotRateLimited } from './decorators/rate-limit.decorators.js';
import { ReadinessChecks } from './readiness.checks.js';

/** Probes for people and orchestrators: no key, never rate-limited, never cached. */
@Controller('health')
@Public()
@NotRateLimited()
@ApiTags('health')
export class HealthController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly health: HealthCheckService,
    private readonly readiness: ReadinessChecks,
    @Inject(PROCESS_ROLE) private readonly role: ProcessRole,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Is the server up, and are skills on' })
  @ApiOkResponse({ type: HealthDto })
  status(): HealthDto {
    const { worker } = this.role;
    return {
      status: 'ok',
      skills: this.config.app.skills.enabled ? 'enabled' : 'disabled',
      ...(worker === undefined ? {} : { worker: { id: worker, pid: process.pid } }),
    };
  }

  @Get('live')
  @Header('cache-control', 'no-store')
  @ApiOperation({
    summary: 'Liveness: the process answers',
    description: 'For a liveness probe: 200 while the process can answer at all (503 only while it stops).',
  })
  @ApiOkResponse({ type: HealthReportDto })
  @ApiResponse({ status: 503, type: HealthReportDto, description: 'The process is stopping.' })
  live(@Res({ passthrough: true }) reply: FastifyReply) {
    return this.report(reply, []);
  }

  @Get('ready')
  @Header('cache-control', 'no-store')
  @ApiOperation({
    summary: 'Readiness: send traffic here',
    description:
      'For a readiness probe or a load balancer: `database` answers `SELECT 1` within 800 ms, the `skills` ' +
      'snapshot is loaded (when skills are on), and the `lifecycle` is not shutting down.',
  })
  @ApiOkResponse({ type: HealthReportDto })
  @ApiResponse({
    status: 503,
    type: HealthReportDto,
    description: 'Not ready: `error` names the failing checks, each with a `message`.',
  })
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const result = await this.report(reply, this.readiness.all());
    this.readiness.noteOutcome(result);
    return result;
  }

  /** terminus throws its 503 report; it is answered as is rather than as an error body. */
  private async report(reply: FastifyReply, checks: HealthIndicatorFunction[]): Promise<HealthCheckResult> {
    try {
      return await this.health.check(checks);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      reply.status(503);
      return error.getResponse() as HealthCheckResult;
    }
  }
}
