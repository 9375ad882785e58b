import { InitialSchema1763800000000 } from './1763800000000-initial-schema.js';
import { ChatLastSeq1763900000000 } from './1763900000000-chat-last-seq.js';
import { UsersAndApiKeys1764000000000 } from './1764000000000-users-and-api-keys.js';
import { CommandsAndInvocations1764100000000 } from './1764100000000-commands-and-invocations.js';
import { ChatEventRelay1764200000000 } from './1764200000000-chat-event-relay.js';
import { SkillStore1764300000000 } from './1764300000000-skill-store.js';
import { RateLimits1764400000000 } from './1764400000000-rate-limits.js';
import { Gateway1764500000000 } from './1764500000000-gateway.js';
import { SkillVersionSource1764600000000 } from './1764600000000-skill-version-source.js';
import { SkillMirrors1764700000000 } from './1764700000000-skill-mirrors.js';
import { GroupsAndRoles1764800000000 } from './1764800000000-groups-and-roles.js';
import { SignIn1764810000000 } from './1764810000000-sign-in.js';
import { OAuthArtifacts1764820000000 } from './1764820000000-oauth-artifacts.js';
import { SkillEvalRuns1764830000000 } from './1764830000000-skill-eval-runs.js';
import { SkillUsage1764840000000 } from './1764840000000-skill-usage.js';
import { SkillEvalCases1764850000000 } from './1764850000000-skill-eval-cases.js';
import { SkillUsageApi1764870000000 } from './1764870000000-skill-usage-api.js';

/** Every migration, in order. Listed explicitly: no file globbing at run time. */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  ChatLastSeq1763900000000,
  UsersAndApiKeys1764000000000,
  CommandsAndInvocations1764100000000,
  ChatEventRelay1764200000000,
  SkillStore1764300000000,
  RateLimits1764400000000,
  Gateway1764500000000,
  SkillVersionSource1764600000000,
  SkillMirrors1764700000000,
  GroupsAndRoles1764800000000,
  SignIn1764810000000,
  OAuthArtifacts1764820000000,
  SkillEvalRuns1764830000000,
  SkillUsage1764840000000,
  SkillEvalCases1764850000000,
  SkillUsageApi1764870000000,
];
