import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { AuthService } from './auth.service.js';
import { BootstrapAdminService } from './bootstrap-admin.service.js';
import { AuditService } from './audit.service.js';
import { GroupsService } from './groups.service.js';
import { UsersService } from './users.service.js';
import { PROVIDER_GROUPS } from './provider-groups.js';
import { WebSessionService } from './web-session.service.js';

/**
 * What the outer layers give the users: the module that provides their storage ports (`USER_STORE`, `API_KEY_STORE`,
 * `GROUP_STORE`, `AUDIT_LOG_STORE`).
 */
export interface UsersAdapters {
  imports: NonNullable<ModuleMetadata['imports']>;
}

/** Users, their keys and who a request's key belongs to: the rules, without the routes. */
@Module({})
export class UsersModule {
  static forRoot(adapters: UsersAdapters): DynamicModule {
    return {
      module: UsersModule,
      imports: adapters.imports,
      providers: [
        AuthService,
        UsersService,
        GroupsService,
        AuditService,
        BootstrapAdminService,
        WebSessionService,
        // Where sign-in hands the provider's groups claim: the person's provider groups become the claim's.
        { provide: PROVIDER_GROUPS, useExisting: GroupsService },
      ],
      exports: [AuthService, UsersService, GroupsService, AuditService, WebSessionService, PROVIDER_GROUPS],
    };
  }
}
