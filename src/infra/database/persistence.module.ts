import { Module } from '@nestjs/common';
import { LifecycleModule } from '../../domain/lifecycle/lifecycle.module.js';
import { CHAT_EVENT_RELAY } from '../../domain/chats/chat-event-relay.js';
import { CHAT_STORE } from '../../domain/chats/chat-store.js';
import { NOTIFICATION_BUS } from '../../domain/shared/notification-bus.js';
import { API_KEY_STORE } from '../../domain/users/api-key-store.js';
import { USER_STORE } from '../../domain/users/user-store.js';
import { GROUP_STORE } from '../../domain/users/group-store.js';
import { AUDIT_LOG_STORE } from '../../domain/users/audit-log-store.js';
import { SKILL_VERSION_STORE } from '../../domain/skills/store/skill-version-store.js';
import { SKILL_MIRROR_STORE } from '../../domain/skills/store/skill-mirror-store.js';
import { CHAT_SKILL_FILTERS, USER_SKILL_FILTERS } from '../../domain/skills/store/skill-filter-store.js';
import { SKILL_USE } from '../../domain/skills/ranking/skill-use.js';
import { RATE_LIMIT_STORE } from '../../domain/limits/rate-limit-store.js';
import { GATEWAY_STORE } from '../../domain/chats/gateway/gateway-store.js';
import { OAUTH_ARTIFACT_STORE } from '../../domain/oauth/oauth-artifact-store.js';
import { SKILL_USAGE_RECORDER, SKILL_USAGE_STORE } from '../../domain/skills/usage/skill-usage.js';
import { BufferedUsageRecorder } from './buffered-usage-recorder.js';
import { SkillUsageRepository } from './skill-usage.repository.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ChatEventRelayRepository } from './chat-event-relay.repository.js';
import { ChatRepository } from './chat.repository.js';
import { DatabaseHealthRepository } from './database-health.repository.js';
import { GatewayRepository } from './gateway.repository.js';
import { OAuthArtifactRepository } from './oauth-artifact.repository.js';
import { GroupRepository } from './group.repository.js';
import { AuditLogRepository } from './audit-log.repository.js';
import { DatabaseLifecycle, dataSourceProvider } from './database.provider.js';
import { PgNotificationsService } from './pg-notifications.service.js';
import { RateLimitRepository } from './rate-limit.repository.js';
import { SkillMirrorRepository } from './skill-mirror.repository.js';
import { SkillEvalRunRepository } from './skill-eval-run.repository.js';
import { EVAL_RUN_STORE } from '../../domain/skills/evals/eval-run-store.js';
import { SkillEvalCaseRepository } from './skill-eval-case.repository.js';
import { EVAL_CASE_STORE } from '../../domain/skills/evals/eval-case-store.js';
import { SkillStoreRepository } from './skill-store.repository.js';
import { UserRepository } from './user.repository.js';
import { SignInRepository } from './sign-in.repository.js';
import { SIGN_IN_STORE } from '../../domain/sign-in/sign-in-store.js';
import { WEB_SESSION_STORE } from '../../domain/users/web-session-store.js';

/** The domain's storage ports, each bound to the repository that implements it. */
const STORES = [
  { provide: CHAT_STORE, useExisting: ChatRepository },
  { provide: CHAT_EVENT_RELAY, useExisting: ChatEventRelayRepository },
  { provide: NOTIFICATION_BUS, useExisting: PgNotificationsService },
  { provide: USER_STORE, useExisting: UserRepository },
  { provide: API_KEY_STORE, useExisting: ApiKeyRepository },
  { provide: GROUP_STORE, useExisting: GroupRepository },
  { provide: AUDIT_LOG_STORE, useExisting: AuditLogRepository },
  { provide: SKILL_VERSION_STORE, useExisting: SkillStoreRepository },
  { provide: SKILL_MIRROR_STORE, useExisting: SkillMirrorRepository },
  { provide: EVAL_RUN_STORE, useExisting: SkillEvalRunRepository },
  { provide: EVAL_CASE_STORE, useExisting: SkillEvalCaseRepository },
  { provide: USER_SKILL_FILTERS, useExisting: UserRepository },
  { provide: CHAT_SKILL_FILTERS, useExisting: ChatRepository },
  { provide: SKILL_USE, useExisting: ChatRepository },
  { provide: RATE_LIMIT_STORE, useExisting: RateLimitRepository },
  { provide: GATEWAY_STORE, useExisting: GatewayRepository },
  { provide: SIGN_IN_STORE, useExisting: SignInRepository },
  { provide: WEB_SESSION_STORE, useExisting: SignInRepository },
  { provide: OAUTH_ARTIFACT_STORE, useExisting: OAuthArtifactRepository },
  { provide: SKILL_USAGE_STORE, useExisting: SkillUsageRepository },
  { provide: SKILL_USAGE_RECORDER, useExisting: BufferedUsageRecorder },
];

@Module({
  imports: [LifecycleModule],
  providers: [
    DatabaseLifecycle,
    dataSourceProvider,
    ChatRepository,
    UserRepository,
    ApiKeyRepository,
    DatabaseHealthRepository,
    PgNotificationsService,
    ChatEventRelayRepository,
    SkillStoreRepository,
    SkillMirrorRepository,
    SkillEvalRunRepository,
    SkillEvalCaseRepository,
    RateLimitRepository,
    GatewayRepository,
    SignInRepository,
    OAuthArtifactRepository,
    GroupRepository,
    AuditLogRepository,
    SkillUsageRepository,
    BufferedUsageRecorder,
    ...STORES,
  ],
  exports: [
    ChatRepository,
    UserRepository,
    ApiKeyRepository,
    DatabaseHealthRepository,
    PgNotificationsService,
    ChatEventRelayRepository,
    SkillStoreRepository,
    ...STORES.map((store) => store.provide),
  ],
})
export class PersistenceModule {}
