import { type DynamicModule, Module, type ModuleMetadata } from '@nestjs/common';
import { OidcProviderClient } from './oidc-provider.client.js';
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
      providers: [OidcProviderClient, SignInService],
      exports: [SignInService],
    };
  }
}
