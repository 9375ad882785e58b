import { Controller, Get, Inject } from '@nestjs/common';
import { Public } from './auth/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from './config/app-config.js';

@Controller()
@Public()
export class HealthController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('health')
  health() {
    return { status: 'ok', skills: this.config.app.skills.enabled ? 'enabled' : 'disabled' };
  }
}
