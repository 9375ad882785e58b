import { Inject, Injectable, Logger, type OnApplicationBootstrap, Optional } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { settingLabel } from '../../config/config-schema.js';
import { PROCESS_ROLE, type ProcessRole } from '../../config/process-role.js';
import { AuthService } from './auth.service.js';
import { BOOTSTRAP_ADMIN_NAME, type BootstrapKeyOutcome, UsersService } from './users.service.js';

const SETTING = settingLabel('app.auth.bootstrap_admin_key');
const CREATE_AN_ADMIN = '`skillhost users add NAME --admin` then `skillhost keys create --user NAME`';

/**
 * A first admin for headless installs (a container has no terminal to run the CLI in first): at
 * start-up, before the server listens, registers the bootstrap admin key when one is configured.
 * With keys required and none configured, says how to make a first admin when no admin can sign
 * in. The key itself is never logged; the lines name the key's id, which `skillhost keys list`
 * and `keys revoke` use. Of a cluster's workers, the first does this for all.
 */
@Injectable()
export class BootstrapAdminService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Auth');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersService,
    private readonly auth: AuthService,
    @Optional() @Inject(PROCESS_ROLE) private readonly role?: ProcessRole,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.role?.runsStartupTasks === false) return;
    const key = this.config.app.auth.bootstrapAdminKey;
    if (key !== '') {
      this.report(await this.users.registerBootstrapKey(key));
    } else if (this.auth.mode === 'api_key' && !(await this.users.hasUsableAdminKey())) {
      this.logger.warn(
        `No admin has a working API key, so nobody can administer this server: set ${SETTING} to a key from ` +
          `\`skillhost keys generate\` and restart, or run ${CREATE_AN_ADMIN}.`,
      );
    }
  }

  private report(outcome: BootstrapKeyOutcome): void {
    switch (outcome.kind) {
      case 'registered':
        this.logger.log(
          `Registered the bootstrap admin key (${SETTING}) as API key ${outcome.keyId} of the admin ` +
            `'${outcome.userName}'`,
        );
        return;
      case 'stored': {
        const { keyId, userName, role, disabled } = outcome.owner;
        if (role === 'admin' && !disabled)
          this.logger.log(`The bootstrap admin key is registered: API key ${keyId} of the admin '${userName}'`);
        else
          this.logger.warn(
            `The bootstrap admin key (API key ${keyId}) belongs to '${userName}', who is ` +
              `${disabled ? 'disabled' : 'a member'} now; left so. Unset ` +
              `${SETTING} if it is no longer meant to be used.`,
          );
        return;
      }
      case 'revoked':
        this.logger.warn(
          `The bootstrap admin key (API key ${outcome.owner.keyId} of '${outcome.owner.userName}') was revoked: ` +
            `it stays revoked and is not registered again. Unset ${SETTING}, or set a new key from \`skillhost ` +
            `keys generate\`.`,
        );
        return;
      case 'user-not-admin': {
        const { id, disabled } = outcome.user;
        this.logger.warn(
          `The bootstrap admin key was not registered: the user '${BOOTSTRAP_ADMIN_NAME}' exists and is ` +
            `${disabled ? 'disabled' : 'a member'}, and start-up neither promotes nor re-enables a user. ` +
            `Make it an enabled admin (PATCH /v1/admin/users/${id}), or run ${CREATE_AN_ADMIN}.`,
        );
        return;
      }
    }
  }
}
