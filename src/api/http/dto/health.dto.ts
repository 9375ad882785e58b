import { ApiProperty, ApiPropertyOptional, type SchemaObject } from '@nestjs/swagger';

/** What `GET /health` answers. */
export class HealthWorkerDto {
  @ApiProperty({ type: 'integer', description: "The cluster's id of the worker (a restarted worker gets a new one)." })
  id: number;

  @ApiProperty({ type: 'integer', description: 'Its process id.' })
  pid: number;
}

export class HealthDto {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';

  @ApiProperty({ enum: ['enabled', 'disabled'], description: '`app.skills.enabled`.' })
  skills: 'enabled' | 'disabled';

  @ApiProperty({
    required: false,
    type: () => HealthWorkerDto,
    description: 'With `[app] workers` above 1: the worker process that answered.',
  })
  worker?: HealthWorkerDto;
}

/** One check: its status, and what it found (`message` says why it is down). */
const CHECK_RESULT: SchemaObject = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string', enum: ['up', 'down', 'degraded'] }, message: { type: 'string' } },
  additionalProperties: true,
};

/** What `GET /health/live` and `GET /health/ready` answer (@nestjs/terminus's report), 200 and 503 alike. */
export class HealthReportDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down', 'degraded'], description: '`ok` (200), or why not (503).' })
  status: 'ok' | 'error' | 'shutting_down' | 'degraded';

  @ApiPropertyOptional({ type: 'object', additionalProperties: CHECK_RESULT, description: 'The checks that are up.' })
  info?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: CHECK_RESULT,
    description: 'The checks that failed: `database`, `skills` or `lifecycle`.',
  })
  error?: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: CHECK_RESULT, description: 'Every check.' })
  details: Record<string, unknown>;
}
