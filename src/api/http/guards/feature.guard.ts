import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { routeMetadata } from '../decorators/route-metadata.js';
import { AppError, assertUnreachable, ErrorCode, mcpDisabledError, skillsDisabledError } from '@skillhost/core';

export type Feature = 'skills' | 'tools' | 'mcp' | 'gateway';

/** Marks a controller or route as available only while its feature flags are on. */
export const RequireFeature = Reflector.createDecorator<Feature | Feature[]>();

/** Global guard: a route marked with a disabled feature answers with that feature's domain error. */
@Injectable()
export class FeatureGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const required = routeMetadata(this.reflector, RequireFeature, context.getHandler(), context.getClass());
    if (required === undefined) return true;
    for (const feature of Array.isArray(required) ? required : [required]) this.check(feature);
    return true;
  }

  private check(feature: Feature): void {
    switch (feature) {
      case 'skills':
        if (!this.config.app.skills.enabled) throw skillsDisabledError();
        return;
      case 'tools':
        if (!this.config.app.tools.enabled) {
          throw new AppError(
            ErrorCode.TOOLS_DISABLED,
            'Skill tools are disabled on this server (app.tools.enabled = false).',
          );
        }
        return;
      case 'mcp':
        if (!this.config.app.skills.enabled) throw skillsDisabledError();
        if (!this.config.app.mcp.enabled) throw mcpDisabledError();
        return;
      case 'gateway':
        if (!this.config.app.gateway.enabled)
          throw new AppError(
            ErrorCode.GATEWAY_DISABLED,
            'The OpenAI-compatible gateway is disabled on this server ([app.gateway] enabled = false).',
          );
        return;
      default:
        assertUnreachable(feature);
    }
  }
}
