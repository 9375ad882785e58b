import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { GroupsService } from '../users/groups.service.js';
import { OidcProviderClient } from './oidc-provider.client.js';
import { PROVIDER_GROUPS } from './provider-groups.js';
import { SignInService } from './sign-in.service.js';

/**
 * Sign-in with the team's identity provider. Its storage (`SIGN_IN_STORE`) comes from `adapters`; the web
 * sessions' service is the users module's, since every request's authentication reads it.
 */
@Module({})
export class SignInModule {
  static forRoot(adapters: { imports: NonNullable<ModuleMetadata['imports']>; users: DynamicModule }): DynamicModule {
    return {
      module: SignInModule,
      imports: [...adapters.imports, adapters.users],
      // The provider's groups claim becomes the person's provider groups at each sign-in.
      providers: [OidcProviderClient, SignInService, { provide: PROVIDER_GROUPS, useExisting: GroupsService }],
      exports: [SignInService],
    };
  }
}
