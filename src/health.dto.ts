import { ApiProperty } from '@nestjs/swagger';

/** What `GET /health` answers. */
export class HealthDto {
  @ApiProperty({ enum: ['ok'] })
  status: 'ok';

  @ApiProperty({ enum: ['enabled', 'disabled'], description: '`app.skills.enabled`.' })
  skills: 'enabled' | 'disabled';
}
