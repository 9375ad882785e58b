import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from './auth/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from './config/app-config.js';
import { HealthDto } from './health.dto.js';

@Controller()
@Public()
@ApiTags('health')
export class HealthController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('health')
  @ApiOperation({ summary: 'Is the server up, and are skills on' })
  @ApiOkResponse({ type: HealthDto })
  health() {
    return { status: 'ok', skills: this.config.app.skills.enabled ? 'enabled' : 'disabled' };
  }
}
