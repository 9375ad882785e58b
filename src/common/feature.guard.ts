import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { skillsDisabledError } from './app-error.js';

export type Feature = 'skills';

/** Marks a controller or route as available only while a feature flag is on. */
export const RequireFeature = Reflector.createDecorator<Feature>();

/** Global guard: a route marked with a disabled feature answers with that feature's domain error. */
@Injectable()
export class FeatureGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const feature = this.reflector.getAllAndOverride(RequireFeature, [context.getHandler(), context.getClass()]);
    if (feature === undefined) return true;
    switch (feature) {
      case 'skills':
        if (!this.config.app.skills.enabled) {
          throw skillsDisabledError();
        }
        return true;
    }
  }
}
