import { ErrorCode, httpStatusOf } from '@skillhost/core';

/** When each code is answered, as the API documentation says it; a `Record` so a new code must be described. */
export const ERROR_CODE_DESCRIPTIONS: Readonly<Record<ErrorCode, string>> = {
  [ErrorCode.SKILL_DISABLED]:
    'the skill is switched off (`[app.skills] disabled` or `PUT /v1/admin/skills/:name/enabled`): in no ' +
    'catalogue, not activatable, its files not readable',
  [ErrorCode.SKILL_VERSION_NOT_FOUND]:
    'the installed skill has no version of that number; the message names its versions',
  [ErrorCode.SKILL_QUOTA_EXCEEDED]:
    'the user has as many personal skills as `[app.skills] max_personal_skills` allows; uninstall one first',
  [ErrorCode.SKILL_SWITCH_LOCKED]:
    'the skill is switched off in the configuration (`[app.skills] disabled`), which the API cannot override',
  [ErrorCode.SKILL_MIRROR_NOT_FOUND]: 'no mirror has that name; the message names the mirrors there are',
  [ErrorCode.SKILL_MIRROR_NAME_TAKEN]:
    'a mirror of that name exists already (added by the API or in the configuration)',
  [ErrorCode.SKILL_MIRROR_CONFIGURED]:
    'the mirror is defined in the configuration (`[app.skills.mirrors.NAME]`), which the API cannot remove',
  [ErrorCode.SKILL_NOT_FOUND]: 'no loaded skill has that name; the message names the available ones',
  [ErrorCode.RESOURCE_NOT_FOUND]:
    'no such file in the skill (or a symlink loop); the message names the files that exist',
  [ErrorCode.RESOURCE_OUTSIDE_SKILL]: 'absolute path, `..`, NUL byte, or a symlink that leads out of the skill',
  [ErrorCode.RESOURCE_IS_DIRECTORY]: 'the path names a folder',
  [ErrorCode.RESOURCE_BINARY]: 'the file is not UTF-8 text',
  [ErrorCode.VALIDATION_FAILED]:
    'invalid request input (body, query, an unknown field or model, malformed JSON, JSON that is not UTF-8 or ' +
    'goes past 64 levels, 1,000 members to an array or object or 5,000 values, a NUL or unpaired surrogate in a ' +
    'string); `details.problems` lists the first ten problems and `details.moreProblems` counts the rest',
  [ErrorCode.INVALID_ARCHIVE]:
    'a skill upload (zip, tar.gz, tar or multipart) that is corrupt, has an unsafe entry (absolute path, `..`, ' +
    'backslash, control character, symlink, hard link, device, FIFO, encrypted), a duplicate path, no files, or ' +
    'no SKILL.md at its root or in its one top folder; the message and `details.entry` name the entry',
  [ErrorCode.IMPORT_SOURCE_UNREACHABLE]:
    'an import source (git repository, discovery index) that could not be read: no answer, an error status, a ' +
    'missing ref or path, or past the time allowed; the message says which',
  [ErrorCode.IMPORT_VERIFICATION_FAILED]:
    "another server's discovery index whose files do not match what it declares (digest, size), point to another " +
    'origin, or is not an index; nothing was installed',
  [ErrorCode.IMPORT_SOURCE_FORBIDDEN]:
    "a member's import whose host (or a submodule's) is not in `[app.skills.import] member_hosts` and resolves to " +
    'a loopback, private, link-local, unspecified or multicast address; `details.host` and `details.reason` say ' +
    'which; nothing was fetched from it',
  [ErrorCode.IMPORT_TOO_LARGE]:
    'a git clone that grew past `[app.skills.import] max_clone_bytes`: git was stopped and nothing was installed',
  [ErrorCode.EVAL_REGRESSION]:
    "a new version whose catalogue recall on its trigger evals is below the serving version's, with " +
    '`[app.skills.evals] gate = "refuse"`: `details.regressed` lists the cases; the old version still serves',
  [ErrorCode.EVAL_CASE_NOT_FOUND]:
    'the skill keeps no trigger eval case of that id (`GET /v1/admin/skills/{name}/evals/cases` lists them); a case ' +
    "of the skill's `evals/triggers.json` is changed in the file",
  [ErrorCode.IMPORT_BUSY]:
    'as many imports as `[app.skills.import] max_concurrent` are running on this instance; nothing was read, try ' +
    'again after `Retry-After` seconds',
  [ErrorCode.SKILLS_DISABLED]: '`app.skills.enabled` is false',
  [ErrorCode.ROUTE_NOT_FOUND]: 'no such route',
  [ErrorCode.CHAT_NOT_FOUND]: "no chat of the caller's has that id (another user's chat is not found either)",
  [ErrorCode.SCRIPTS_DISABLED]: '`[app.scripts] enabled` is false: `skills.runScript` is not offered',
  [ErrorCode.SCRIPTS_BUSY]:
    'as many scripts as `[app.scripts] max_concurrent` (on this instance), `max_concurrent_per_user` or ' +
    '`max_concurrent_per_turn` allow are already running; the call did not run (a tool card; `details.reason` ' +
    'names the cap): retry once one has finished, one at a time',
  [ErrorCode.SCRIPT_NOT_ALLOWED]:
    "the skill's `allowed-tools` does not permit that script (a tool card; the message says what the skill " +
    'would need to declare)',
  [ErrorCode.CODE_SKILL_FAILED]:
    "a code skill's `execute` threw, timed out, crashed or answered a bad result (a tool card, never an error answer)",
  [ErrorCode.TOOL_NOT_FOUND]:
    'the configured tool style (`[app.tools] style`) offers no tool of that name; the message names the ones it offers',
  [ErrorCode.TOOLS_DISABLED]: '`[app.tools] enabled` is false',
  [ErrorCode.MCP_DISABLED]: '`[app.mcp] enabled` is false: no `/mcp`, no discovery index',
  [ErrorCode.OAUTH_NOT_SUPPORTED]:
    'an OAuth discovery, registration or token route (which MCP clients probe after a 401): this server takes ' +
    'API keys, and the message says how to send one',
  [ErrorCode.MCP_SESSION_NOT_FOUND]:
    "the `mcp-session-id` names no open session of the caller's (it closed, idled out, was another user's, or " +
    'the instance restarted); the client starts a new one',
  [ErrorCode.GATEWAY_DISABLED]: '`[app.gateway] enabled` is false: no `/openai/v1`',
  [ErrorCode.CONVERSATION_NOT_FOUND]:
    "the gateway's `X-Skillhost-Conversation` (or `metadata.skillhost_conversation`) names no chat of the caller's",
  [ErrorCode.RESPONSE_NOT_FOUND]:
    "the gateway's response id (`previous_response_id`, `GET /openai/v1/responses/:id`) names no stored response " +
    "of the caller's (another user's, one sent with `store: false`, or its chat deleted)",
  [ErrorCode.MODEL_NOT_CONFIGURED]: 'a turn was asked for but no model is configured',
  [ErrorCode.MODEL_ERROR]:
    'the model provider failed (refused, 4xx/5xx, timeout, garbage); nothing was stored. The message and ' +
    "`details.requestId` name the request id under which the server's log holds the provider's reason; only an " +
    "admin's answer has it, in `details.reason`",
  [ErrorCode.DATABASE_UNAVAILABLE]: 'PostgreSQL is unreachable (the API key look-up needs it too); nothing was changed',
  [ErrorCode.PAYLOAD_TOO_LARGE]:
    'the request body is over 1 MiB; a skill upload past `[app.skills] max_install_bytes` unpacked or 1,000 ' +
    'files (reading stops there)',
  [ErrorCode.UNAUTHENTICATED]:
    'the API key is missing, malformed, unknown, revoked or expired, or its user is disabled',
  [ErrorCode.FORBIDDEN]:
    'the route needs an admin (or, to publish or roll back a shared skill, an editor who owns it or whose group ' +
    'owns it) and the caller is not one',
  [ErrorCode.USER_NOT_FOUND]: 'no user has that id',
  [ErrorCode.USER_NAME_TAKEN]: 'a user with that name already exists',
  [ErrorCode.LAST_ADMIN]:
    'the change (a demotion, a disabling, a key revoked) would leave no enabled admin with a working API key; ' +
    'make another admin a key first (the CLI can always add one)',
  [ErrorCode.GROUP_NOT_FOUND]: 'no group has that id',
  [ErrorCode.GROUP_NAME_TAKEN]: 'an admin-made group with that name already exists',
  [ErrorCode.GROUP_MANAGED_BY_PROVIDER]:
    "the group comes from the sign-in provider's groups claim: its members change at sign-in, not here",
  [ErrorCode.API_KEY_NOT_FOUND]: "no API key has that id (for `/v1/me/keys`: none of the caller's)",
  [ErrorCode.CSRF_TOKEN_MISSING]:
    'a write authenticated by the sign-in cookie without its `x-csrf-token` header (from `GET /v1/auth/session`), ' +
    "or with another session's; nothing was changed",
  [ErrorCode.SIGN_IN_NOT_CONFIGURED]: 'sign-in with an identity provider is off: `[app.auth.oidc] issuer` is empty',
  [ErrorCode.SIGN_IN_RETURN_TO_INVALID]:
    '`returnTo` is not a path on this server (it must start with one `/`); nothing was started',
  [ErrorCode.SIGN_IN_STATE_INVALID]:
    'the sign-in answer is unknown, used already, expired or from another browser; start the sign-in again',
  [ErrorCode.SIGN_IN_FAILED]: 'the identity provider refused the sign-in or its answer did not check out',
  [ErrorCode.SIGN_IN_CLAIMS_INVALID]:
    'the identity token lacks the claim that names the user, or a claim is too large or of the wrong type',
  [ErrorCode.SIGN_IN_NOT_ALLOWED]:
    'the person is not in `[app.auth.oidc] allowed_users`, or new users are not created and none is linked',
  [ErrorCode.SIGN_IN_USER_CONFLICT]:
    'a user of that name exists and is not linked to this identity; an admin links them (`PUT ' +
    '/v1/admin/users/{id}/sign-in`)',
  [ErrorCode.SIGN_IN_PROVIDER_UNAVAILABLE]: 'the identity provider could not be reached or its metadata is invalid',
  [ErrorCode.OAUTH_GRANT_NOT_FOUND]: "the caller gave no OAuth grant with that id (another person's is not found)",
  [ErrorCode.INSUFFICIENT_SCOPE]:
    'the OAuth access token was not granted the scope this route needs (`skills:read`, `chats` or `admin`); an ' +
    'API key holds every scope its role allows',
  [ErrorCode.QUERY_TOO_COMPLEX]: 'a GraphQL query is too deep or too large',
  [ErrorCode.UNSUPPORTED_MEDIA_TYPE]:
    'a request body that is not `application/json` (form posts, XML, multipart, a missing content type)',
  [ErrorCode.MISDIRECTED_REQUEST]:
    'auth is off and the `Host` header names neither the listening address, `localhost`, nor an `[app.http] ' +
    'allowed_hosts` entry (DNS rebinding)',
  [ErrorCode.RATE_LIMITED]:
    'over `[app.limits] requests_per_minute` or `turns_per_minute`; `Retry-After` says when to try again',
  [ErrorCode.BUSY]: '`[app.limits] max_concurrent_turns` turns are already running on this instance',
  [ErrorCode.HEADERS_TOO_LARGE]: 'the request line and headers are over 16 KiB in all (answered before routing)',
  [ErrorCode.URI_TOO_LONG]:
    'the request line alone (the URL) is over 16 KiB; send long input in a JSON body (answered before routing)',
  [ErrorCode.REQUEST_TIMEOUT]:
    'the headers did not arrive in time, or the body did not arrive whole within `[app.http] body_timeout_ms` ' +
    '(`upload_timeout_ms` for skill uploads) or came slower than `body_min_bytes_per_second`; the connection is ' +
    'closed',
  [ErrorCode.INTERNAL]: 'anything unexpected; details stay in the server log',
};

/** The README's error table, from the same descriptions the OpenAPI document uses; a test keeps the two equal. */
export function renderErrorReference(): string {
  const rows = Object.values(ErrorCode).map(
    (code) => `| \`${code}\` | ${httpStatusOf(code)} | ${ERROR_CODE_DESCRIPTIONS[code]} |`,
  );
  return ['| code | status | when |', '|---|---|---|', ...rows].join('\n');
}
