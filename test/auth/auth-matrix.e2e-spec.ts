import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { KEY_CACHE_TTL_MS } from '../../src/domain/users/auth.service.js';
import { GroupsService } from '../../src/domain/users/groups.service.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { type UploadBody, zipOf } from '../support/skill-archives.js';
import { freePort } from '../support/ports.js';
import { type Answer, rpcBody, send } from '../support/mcp-http.js';
import { OAuthTestClient } from './oauth-browser.js';

/**
 * Every REST route × every kind of caller → the documented status. Callers: no key, a member
 * (alice, who owns the fixtures and is in the group `team-a`), another member (bob), an admin (root), an editor
 * (erin, in `team-a`, which owns the shared skill `installed`), a member of another group (gus, in `team-b`), a
 * revoked key and an expired key (both alice's); and alice's OAuth access tokens: one granted `skills:read` only, one
 * whose expiry has passed, and one from a grant whose refresh token was revoked. The shared skill `team-a-only` is
 * shared with `team-a`: no caller outside it (admins included: their own catalogue follows their groups) reads it
 * anywhere. The routes are the OpenAPI document's (but NOT_IN_MATRIX); the other doors (GraphQL, `/mcp`, the gateway)
 * follow, and last every door that lists skills, by group.
 */
type Caller =
  | 'anonymous'
  | 'member'
  | 'otherMember'
  | 'admin'
  | 'editor'
  | 'otherGroup'
  | 'revoked'
  | 'expired'
  | 'fewScopes'
  | 'expiredToken'
  | 'revokedRefresh';
const CALLERS: Caller[] = [
  'anonymous',
  'member',
  'otherMember',
  'admin',
  'editor',
  'otherGroup',
  'revoked',
  'expired',
  'fewScopes',
  'expiredToken',
  'revokedRefresh',
];
/** The callers whose credentials no longer (or never) work: 401 everywhere but the public routes. */
const UNAUTHENTICATED: Caller[] = ['anonymous', 'revoked', 'expired', 'expiredToken', 'revokedRefresh'];

/**
 * What a route needs of an OAuth token, as docs/mcp-and-agents.md documents it: `all` for a route that names no
 * scope (every scope the user's role allows). Written here by hand, not read from the app, so that a route which
 * lost or weakened its scope fails.
 */
type Needs = 'none' | 'skills:read' | 'chats' | 'all';
/** alice's `skills:read` token where it lacks the scope: 403 INSUFFICIENT_SCOPE, naming the scope (RFC 6750 §3.1). */
type Refused = { insufficientScope: string };
type Expected = {
  member: number;
  otherMember: number;
  admin: number;
  editor: number;
  otherGroup: number;
  fewScopes: number | Refused;
};

interface Fixtures {
  users: { alice: string; bob: string; root: string };
  groups: { teamA: string };
  /** A fresh admin group, by id, with `member` in it when given (for routes that delete one or a member). */
  newGroupId(member?: string): Promise<string>;
  keys: Record<Caller, string | undefined>;
  /** A fresh chat of alice's with one activation (for routes that change or remove it). */
  newChat(): Promise<string>;
  /** A fresh key of alice's, by id (for revocation routes). */
  newAliceKeyId(): Promise<string>;
  /** A fresh kept trigger eval case of the skill, by id (for the route that removes one). */
  newEvalCaseId(skill: string): Promise<string>;
  /** A fresh OAuth grant of alice's, by id (for the grant revocation route). */
  newAliceGrantId(): Promise<string>;
}

interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The route as documented, e.g. `/v1/chats/:id`. */
  route: string;
  path: (fx: Fixtures) => Promise<string> | string;
  body?: Record<string, unknown>;
  /** A skill upload instead of a JSON body. */
  upload?: () => Promise<UploadBody>;
  /** The code of a 404 (default: CHAT_NOT_FOUND, or API_KEY_NOT_FOUND for key routes). */
  notFound?: string;
  /** Statuses for the callers with a working key or token; the others are 401 unless public. */
  expect: Expected;
  public?: boolean;
}

/** What alice's `skills:read` token gets: what alice gets with a key where that is enough, else refused. */
const narrow = (needs: Needs, member: number): number | Refused =>
  needs === 'none' || needs === 'skills:read'
    ? member
    : { insufficientScope: needs === 'all' ? 'skills:read chats' : needs };
const owned = (member: number, needs: Needs): Expected => ({
  member,
  otherMember: 404,
  admin: 404,
  editor: 404,
  otherGroup: 404,
  fewScopes: narrow(needs, member),
});
const anyKey = (status: number, needs: Needs): Expected => ({
  member: status,
  otherMember: status,
  admin: status,
  editor: status,
  otherGroup: status,
  fewScopes: narrow(needs, status),
});
/**
 * An admin's route. `@AdminOnly()` ones (`admin`) refuse alice's token as they refuse her key, for her role (403
 * FORBIDDEN) before any scope; those whose service checks the role (`all`) refuse it for its scopes first.
 */
const adminOnly = (status: number, needs: 'admin' | 'all' = 'admin'): Expected => ({
  member: 403,
  otherMember: 403,
  admin: status,
  editor: 403,
  otherGroup: 403,
  fewScopes: needs === 'admin' ? 403 : narrow(needs, 403),
});
/** A read of `team-a-only` (a `skills:read` route): its group's members (alice, erin) only. */
const teamA = (status: number): Expected => ({
  member: status,
  otherMember: 404,
  admin: 404,
  editor: status,
  otherGroup: 404,
  fewScopes: status,
});

const ROUTES: Route[] = [
  { method: 'get', route: '/health', path: () => '/health', expect: anyKey(200, 'none'), public: true },
  { method: 'get', route: '/health/live', path: () => '/health/live', expect: anyKey(200, 'none'), public: true },
  { method: 'get', route: '/health/ready', path: () => '/health/ready', expect: anyKey(200, 'none'), public: true },
  { method: 'get', route: '/metrics', path: () => '/metrics', expect: adminOnly(200) },
  { method: 'get', route: '/v1/me', path: () => '/v1/me', expect: anyKey(200, 'none') },
  {
    method: 'get',
    route: '/v1/auth/providers',
    path: () => '/v1/auth/providers',
    expect: anyKey(200, 'none'),
    public: true,
  },
  { method: 'get', route: '/v1/auth/session', path: () => '/v1/auth/session', expect: anyKey(200, 'all') },
  { method: 'post', route: '/v1/auth/logout', path: () => '/v1/auth/logout', expect: anyKey(204, 'all') },
  {
    method: 'put',
    route: '/v1/admin/users/:id/sign-in',
    path: (fx) => `/v1/admin/users/${fx.users.bob}/sign-in`,
    body: { email: 'bob@example.com' },
    expect: adminOnly(200),
  },
  {
    method: 'post',
    route: '/v1/me/keys',
    path: () => '/v1/me/keys',
    body: { label: 'laptop' },
    expect: anyKey(201, 'all'),
  },
  { method: 'get', route: '/v1/me/keys', path: () => '/v1/me/keys', expect: anyKey(200, 'all') },
  // Only one's own keys: another user's key id is simply not found, whatever the role.
  {
    method: 'delete',
    route: '/v1/me/keys/:id',
    path: async (fx) => `/v1/me/keys/${await fx.newAliceKeyId()}`,
    expect: owned(204, 'all'),
  },
  // Any token may list and revoke its person's grants (none of them could mint a key, which needs every scope).
  { method: 'get', route: '/v1/me/oauth-grants', path: () => '/v1/me/oauth-grants', expect: anyKey(200, 'none') },
  {
    method: 'delete',
    route: '/v1/me/oauth-grants/:id',
    path: async (fx) => `/v1/me/oauth-grants/${await fx.newAliceGrantId()}`,
    expect: owned(204, 'none'),
    notFound: 'OAUTH_GRANT_NOT_FOUND',
  },
  {
    method: 'post',
    route: '/v1/admin/users',
    path: () => `/v1/admin/users`,
    body: { name: `u${Math.random().toString(36).slice(2, 10)}` },
    expect: adminOnly(201),
  },
  { method: 'get', route: '/v1/admin/users', path: () => '/v1/admin/users', expect: adminOnly(200) },
  {
    method: 'patch',
    route: '/v1/admin/users/:id',
    path: (fx) => `/v1/admin/users/${fx.users.bob}`,
    body: { role: 'member' },
    expect: adminOnly(200),
  },
  {
    method: 'post',
    route: '/v1/admin/users/:id/keys',
    path: (fx) => `/v1/admin/users/${fx.users.bob}/keys`,
    body: { label: 'ops' },
    expect: adminOnly(201),
  },
  {
    method: 'delete',
    route: '/v1/admin/keys/:id',
    path: async (fx) => `/v1/admin/keys/${await fx.newAliceKeyId()}`,
    expect: adminOnly(204),
  },
  { method: 'get', route: '/v1/admin/chats', path: () => '/v1/admin/chats', expect: adminOnly(200) },
  { method: 'get', route: '/v1/skills', path: () => '/v1/skills', expect: anyKey(200, 'skills:read') },
  { method: 'get', route: '/v1/skills/:name', path: () => '/v1/skills/pdf', expect: anyKey(200, 'skills:read') },
  {
    method: 'get',
    route: '/v1/skills/:name/body',
    path: () => '/v1/skills/pdf/body',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/v1/skills/:name/resources',
    path: () => '/v1/skills/pdf/resources?type=references',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/v1/skills/:name/resources/*',
    path: () => '/v1/skills/pdf/resources/references/forms.md',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/v1/skills-catalogue',
    path: () => '/v1/skills-catalogue',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/v1/skills/search',
    path: () => '/v1/skills/search?q=pdf',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/.well-known/agent-skills/index.json',
    path: () => '/.well-known/agent-skills/index.json',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/.well-known/agent-skills/versions.json',
    path: () => '/.well-known/agent-skills/versions.json',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'get',
    route: '/.well-known/agent-skills/:name/*',
    path: () => '/.well-known/agent-skills/pdf/SKILL.md',
    expect: anyKey(200, 'skills:read'),
  },
  { method: 'get', route: '/v1/admin/mcp', path: () => '/v1/admin/mcp', expect: adminOnly(200) },
  { method: 'get', route: '/v1/models', path: () => '/v1/models', expect: anyKey(200, 'chats') },
  { method: 'get', route: '/v1/commands', path: () => '/v1/commands', expect: anyKey(200, 'chats') },
  { method: 'get', route: '/v1/admin/skills', path: () => '/v1/admin/skills', expect: adminOnly(200) },
  {
    method: 'get',
    route: '/v1/admin/skills/mirrors',
    path: () => '/v1/admin/skills/mirrors',
    expect: adminOnly(200),
  },
  { method: 'post', route: '/v1/admin/skills/reload', path: () => '/v1/admin/skills/reload', expect: adminOnly(200) },
  {
    method: 'post',
    route: '/v1/admin/skills',
    path: () => '/v1/admin/skills',
    upload: () => zipOf({ 'shared-one/SKILL.md': skillMd({ name: 'shared-one' }) }),
    // The admin installs it first; the editor owns neither it nor a group that does.
    expect: adminOnly(201, 'all'),
  },
  {
    method: 'post',
    route: '/v1/admin/skills',
    path: () => '/v1/admin/skills',
    upload: () => zipOf({ 'installed/SKILL.md': skillMd({ name: 'installed', body: 'SECOND' }) }),
    // A new version the first time (the admin's), the same content again after (the editor's: team-a owns it).
    expect: { ...adminOnly(201, 'all'), editor: 200 },
  },
  // Each caller installs into its own personal scope: a new skill for each.
  {
    method: 'post',
    route: '/v1/skills',
    path: () => '/v1/skills',
    upload: () => zipOf({ 'mine/SKILL.md': skillMd({ name: 'mine' }) }),
    expect: anyKey(201, 'all'),
  },
  {
    method: 'get',
    route: '/v1/skills/:name/versions',
    path: () => '/v1/skills/installed/versions',
    expect: anyKey(200, 'skills:read'),
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/rollback',
    path: () => '/v1/admin/skills/installed/rollback',
    body: { version: 1 },
    expect: { ...adminOnly(200, 'all'), editor: 200 },
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/rollback',
    path: () => '/v1/admin/skills/team-a-only/rollback',
    body: { version: 1 },
    // Owned by nobody: admins only, whoever sees it.
    expect: adminOnly(200, 'all'),
  },
  {
    method: 'get',
    route: '/v1/admin/skills/:name/evals',
    path: () => '/v1/admin/skills/installed/evals',
    expect: { ...adminOnly(200, 'all'), editor: 200 },
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/evals/run',
    path: () => '/v1/admin/skills/installed/evals/run',
    body: {},
    // Its owners' editors (team-a) too, as for publishing.
    expect: { ...adminOnly(200, 'all'), editor: 200 },
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/evals/run',
    path: () => '/v1/admin/skills/team-a-only/evals/run',
    body: {},
    // Owned by nobody: admins only, whoever sees it.
    expect: adminOnly(200, 'all'),
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/evals',
    path: () => '/v1/admin/skills/installed/evals',
    body: {},
    // The same run as …/evals/run, at a path every skill name reaches: the same callers.
    expect: { ...adminOnly(200, 'all'), editor: 200 },
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/evals',
    path: () => '/v1/admin/skills/team-a-only/evals',
    body: {},
    expect: adminOnly(200, 'all'),
  },
  {
    method: 'get',
    route: '/v1/admin/skills/:name/evals/cases',
    path: () => '/v1/admin/skills/installed/evals/cases',
    expect: { ...adminOnly(200, 'all'), editor: 200 },
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/evals/cases',
    path: () => '/v1/admin/skills/installed/evals/cases',
    body: { query: 'fill in this tax form for me', should_trigger: true },
    // The editor (after the admin) sends the same case again: merged, 200.
    expect: { ...adminOnly(201, 'all'), editor: 200 },
  },
  {
    method: 'post',
    route: '/v1/admin/skills/:name/evals/cases',
    path: () => '/v1/admin/skills/team-a-only/evals/cases',
    body: { query: 'fill in this tax form for me', should_trigger: true },
    expect: adminOnly(201, 'all'),
  },
  {
    method: 'delete',
    route: '/v1/admin/skills/:name/evals/cases/:id',
    path: async (fx) => `/v1/admin/skills/installed/evals/cases/${await fx.newEvalCaseId('installed')}`,
    expect: { ...adminOnly(204, 'all'), editor: 204 },
  },
  {
    method: 'get',
    route: '/v1/skills/:name',
    path: () => '/v1/skills/team-a-only',
    expect: teamA(200),
    notFound: 'SKILL_NOT_FOUND',
  },
  {
    method: 'get',
    route: '/v1/skills/:name/body',
    path: () => '/v1/skills/team-a-only/body',
    expect: teamA(200),
    notFound: 'SKILL_NOT_FOUND',
  },
  {
    method: 'get',
    route: '/v1/skills/:name/resources/*',
    path: () => '/v1/skills/team-a-only/resources/references/a.md',
    expect: teamA(200),
    notFound: 'SKILL_NOT_FOUND',
  },
  {
    method: 'get',
    route: '/.well-known/agent-skills/:name/*',
    path: () => '/.well-known/agent-skills/team-a-only/SKILL.md',
    expect: teamA(200),
    notFound: 'SKILL_NOT_FOUND',
  },
  {
    method: 'get',
    route: '/v1/skills/:name/versions',
    path: () => '/v1/skills/team-a-only/versions?scope=shared',
    // Admins read every shared skill's versions (an admin view); others those of the skills shared with them.
    expect: { ...teamA(200), admin: 200 },
    notFound: 'SKILL_NOT_FOUND',
  },
  { method: 'get', route: '/v1/admin/groups', path: () => '/v1/admin/groups', expect: adminOnly(200) },
  {
    method: 'post',
    route: '/v1/admin/groups',
    path: () => '/v1/admin/groups',
    body: { name: `g${Math.random().toString(36).slice(2, 10)}` },
    expect: adminOnly(201),
  },
  {
    method: 'get',
    route: '/v1/admin/groups/:id',
    path: (fx) => `/v1/admin/groups/${fx.groups.teamA}`,
    expect: adminOnly(200),
  },
  {
    method: 'delete',
    route: '/v1/admin/groups/:id',
    path: async (fx) => `/v1/admin/groups/${await fx.newGroupId()}`,
    expect: adminOnly(204),
  },
  {
    method: 'put',
    route: '/v1/admin/groups/:id/members/:userId',
    path: (fx) => `/v1/admin/groups/${fx.groups.teamA}/members/${fx.users.alice}`,
    expect: adminOnly(200),
  },
  {
    method: 'delete',
    route: '/v1/admin/groups/:id/members/:userId',
    path: async (fx) => `/v1/admin/groups/${await fx.newGroupId(fx.users.bob)}/members/${fx.users.bob}`,
    expect: adminOnly(200),
  },
  { method: 'get', route: '/v1/admin/audit', path: () => '/v1/admin/audit', expect: adminOnly(200) },
  { method: 'get', route: '/v1/admin/skills/usage', path: () => '/v1/admin/skills/usage', expect: adminOnly(200) },
  {
    method: 'get',
    route: '/v1/admin/skills/:name/access',
    path: () => '/v1/admin/skills/team-a-only/access',
    expect: adminOnly(200),
  },
  {
    method: 'put',
    route: '/v1/admin/skills/:name/access',
    path: () => '/v1/admin/skills/installed/access',
    body: { audience: 'team' },
    expect: adminOnly(200),
  },
  {
    method: 'delete',
    route: '/v1/admin/skills/:name',
    path: () => '/v1/admin/skills/to-remove',
    expect: adminOnly(204),
  },
  // Only one's own personal skills: another user's is not found, whatever the role.
  {
    method: 'delete',
    route: '/v1/skills/:name',
    path: () => '/v1/skills/alice-own',
    expect: owned(204, 'all'),
    notFound: 'SKILL_NOT_FOUND',
  },
  {
    method: 'put',
    route: '/v1/admin/skills/:name/enabled',
    path: () => '/v1/admin/skills/pdf/enabled',
    body: { enabled: true },
    expect: adminOnly(200),
  },
  { method: 'get', route: '/v1/me/skills', path: () => '/v1/me/skills', expect: anyKey(200, 'skills:read') },
  {
    method: 'put',
    route: '/v1/me/skills',
    path: () => '/v1/me/skills',
    body: { exclude: ['nothing-*'] },
    expect: anyKey(200, 'all'),
  },
  {
    method: 'get',
    route: '/v1/chats/:id/skills',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}/skills`),
    expect: owned(200, 'chats'),
  },
  {
    method: 'put',
    route: '/v1/chats/:id/skills',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}/skills`),
    body: { include: ['pdf'] },
    expect: owned(200, 'chats'),
  },
  { method: 'post', route: '/v1/chats', path: () => '/v1/chats', body: { title: 't' }, expect: anyKey(201, 'chats') },
  { method: 'get', route: '/v1/chats', path: () => '/v1/chats', expect: anyKey(200, 'chats') },
  {
    method: 'get',
    route: '/v1/chats/:id',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}`),
    expect: owned(200, 'chats'),
  },
  {
    method: 'delete',
    route: '/v1/chats/:id',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}`),
    expect: owned(204, 'chats'),
  },
  {
    method: 'get',
    route: '/v1/chats/:id/messages',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}/messages`),
    expect: owned(200, 'chats'),
  },
  {
    method: 'post',
    route: '/v1/chats/:id/messages',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}/messages`),
    body: { content: 'hi' },
    expect: owned(201, 'chats'),
  },
  {
    method: 'get',
    route: '/v1/chats/:id/context',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}/context`),
    expect: owned(200, 'chats'),
  },
  {
    method: 'post',
    route: '/v1/chats/:id/tools/:tool',
    path: (fx) => fx.newChat().then((id) => `/v1/chats/${id}/tools/skills.readResource`),
    body: { name: 'pdf', path: 'references/forms.md' },
    expect: owned(200, 'chats'),
  },
];

/**
 * The routes of the OpenAPI document the matrix leaves to the suites that build what they need (a git server, an
 * archive host, a mirror's upstream), with why. Every other route of the document is in ROUTES.
 */
const NOT_IN_MATRIX: Record<string, string> = {
  'POST /v1/admin/skills/import': 'imports from a network source: test/store/skill-import*.e2e-spec.ts',
  'POST /v1/skills/import': 'imports from a network source: test/store/skill-import*.e2e-spec.ts',
  'POST /v1/admin/skills/mirrors': 'follows an upstream: test/store/skill-mirrors.e2e-spec.ts',
  'POST /v1/admin/skills/mirrors/:name/run': 'follows an upstream: test/store/skill-mirrors.e2e-spec.ts',
  'DELETE /v1/admin/skills/mirrors/:name': 'follows an upstream: test/store/skill-mirrors.e2e-spec.ts',
};

let tree: TempTree;
let ctx: ChatTestContext;
let fx: Fixtures;
let base: string;
const http = () => request(ctx.app.getHttpServer());

beforeAll(async () => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
  tree.write('skills/pdf/references/forms.md', 'FORMS');
  const port = await freePort();
  ctx = await startChatApp([tree.path('skills')], {
    'app.auth.mode': 'api_key',
    'app.auth.oauth.enabled': true,
    'app.port': port,
  });
  await ctx.app.listen(port, '127.0.0.1');
  base = `http://127.0.0.1:${port}`;
  ctx.model.answerWith(() => ({ text: 'ok' }));
  const users = ctx.app.get(UsersService);
  const alice = await users.createUser('alice', 'member');
  const bob = await users.createUser('bob', 'member');
  const root = await users.createUser('root', 'admin');
  const erin = await users.createUser('erin', 'editor');
  const gus = await users.createUser('gus', 'member');
  const groups = ctx.app.get(GroupsService);
  const teamA = await groups.createGroup('team-a', { id: root.id, name: 'root' });
  const teamB = await groups.createGroup('team-b', { id: root.id, name: 'root' });
  await groups.addMember(teamA.id, alice.id, { id: root.id, name: 'root' });
  await groups.addMember(teamA.id, erin.id, { id: root.id, name: 'root' });
  await groups.addMember(teamB.id, gus.id, { id: root.id, name: 'root' });
  const revoked = await users.createKey(alice.id, { label: 'revoked' });
  await users.revokeKey(revoked.apiKey.id);
  const expired = await users.createKey(alice.id, { label: 'expired', expiresAt: new Date(Date.now() + 60_000) });
  await query(ctx.db.url, "UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [
    expired.apiKey.id,
  ]);
  const memberKey = (await users.createKey(alice.id)).key;
  const adminKey = (await users.createKey(root.id)).key;
  const install = async (path: string, key: string, files: Record<string, string>) => {
    const archive = await zipOf(files);
    await http()
      .post(path)
      .set('authorization', `Bearer ${key}`)
      .set('content-type', archive.contentType)
      .send(archive.body)
      .expect(201);
  };
  await install('/v1/admin/skills', adminKey, { 'installed/SKILL.md': skillMd({ name: 'installed' }) });
  await install('/v1/admin/skills', adminKey, { 'to-remove/SKILL.md': skillMd({ name: 'to-remove' }) });
  await install('/v1/admin/skills', adminKey, {
    'team-a-only/SKILL.md': skillMd({ name: 'team-a-only' }),
    'team-a-only/references/a.md': 'A',
  });
  for (const [name, access] of [
    ['team-a-only', { audience: 'groups', groups: [teamA.id] }],
    ['installed', { owningGroupId: teamA.id }],
  ] as const)
    await http()
      .put(`/v1/admin/skills/${name}/access`)
      .set('authorization', `Bearer ${adminKey}`)
      .send(access)
      .expect(200);
  await install('/v1/skills', memberKey, { 'alice-own/SKILL.md': skillMd({ name: 'alice-own' }) });
  const oauth = new OAuthTestClient(base);
  const tokens = await aliceTokens(oauth, memberKey);
  fx = {
    users: { alice: alice.id, bob: bob.id, root: root.id },
    groups: { teamA: teamA.id },
    async newGroupId(member?: string) {
      const group = await groups.createGroup(`g${Math.random().toString(36).slice(2, 10)}`, { id: null, name: null });
      if (member !== undefined) await groups.addMember(group.id, member, { id: null, name: null });
      return group.id;
    },
    keys: {
      anonymous: undefined,
      member: memberKey,
      otherMember: (await users.createKey(bob.id)).key,
      admin: adminKey,
      editor: (await users.createKey(erin.id)).key,
      otherGroup: (await users.createKey(gus.id)).key,
      revoked: revoked.key,
      expired: expired.key,
      ...tokens,
    },
    async newChat() {
      const chat = await http()
        .post('/v1/chats')
        .set('authorization', `Bearer ${memberKey}`)
        .send({ title: 'fixture' })
        .expect(201);
      return chat.body.id as string;
    },
    async newAliceKeyId() {
      return (await users.createKey(alice.id, { label: 'to revoke' })).apiKey.id;
    },
    async newEvalCaseId(skill: string) {
      const added = await http()
        .post(`/v1/admin/skills/${skill}/evals/cases`)
        .set('authorization', `Bearer ${adminKey}`)
        .send({ query: `request ${Math.random().toString(36).slice(2, 10)}`, should_trigger: true })
        .expect(201);
      return added.body.added[0].id as string;
    },
    async newAliceGrantId() {
      const { clientId } = await oauth.tokens(memberKey, 'skills:read');
      const grants = await http().get('/v1/me/oauth-grants').set('authorization', `Bearer ${memberKey}`).expect(200);
      return (grants.body.items as { grantId: string; clientId: string }[]).find(
        (grant) => grant.clientId === clientId,
      )!.grantId;
    },
  };
});

/**
 * alice's OAuth access tokens, through the real flow: one granted `skills:read` only; one whose expiry has passed
 * (its row in `oauth_artifacts` made to say so, as the least TTL the configuration takes is a minute); one from a
 * grant whose refresh token was revoked at the revocation endpoint (RFC 7009: oidc-provider revokes the grant, so its
 * access tokens with it). The last two worked before.
 */
async function aliceTokens(oauth: OAuthTestClient, memberKey: string) {
  const fewScopes = await oauth.tokens(memberKey, 'skills:read');
  expect(fewScopes.scope).toBe('skills:read');
  const expiring = await oauth.tokens(memberKey, 'skills:read chats');
  const revoking = await oauth.tokens(memberKey, 'skills:read chats');
  for (const { access_token: token } of [expiring, revoking])
    expect((await http().get('/v1/chats').set('authorization', `Bearer ${token}`)).status).toBe(200);
  const expired = await query(
    ctx.db.url,
    `UPDATE oauth_artifacts SET expires_at = now() - interval '1 second',
       payload = jsonb_set(payload, '{exp}', to_jsonb(floor(extract(epoch FROM now()))::bigint - 1))
     WHERE model = 'AccessToken' AND id = $1 RETURNING id`,
    [expiring.access_token],
  );
  expect(expired).toHaveLength(1);
  const revocation = await oauth.revoke(revoking.clientId, revoking.refresh_token!, 'refresh_token');
  expect(revocation.status).toBe(200);
  const refreshed = await oauth.tokenRequest({
    grant_type: 'refresh_token',
    refresh_token: revoking.refresh_token!,
    client_id: revoking.clientId,
  });
  expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
  // The revoked grant's access token, cached a moment ago, is refused at once: the revocation forgets its grant's
  // tokens. The expired one is looked up again once its cached look-up lapses, as a key is.
  expect((await http().get('/v1/me').set('authorization', `Bearer ${revoking.access_token}`)).status).toBe(401);
  const deadline = Date.now() + KEY_CACHE_TTL_MS + 2000;
  while ((await http().get('/v1/me').set('authorization', `Bearer ${expiring.access_token}`)).status !== 401) {
    if (Date.now() > deadline) throw new Error('The expired access token still works after the cache time');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    fewScopes: fewScopes.access_token,
    expiredToken: expiring.access_token,
    revokedRefresh: revoking.access_token,
  };
}

afterAll(async () => {
  await ctx?.close();
  tree?.cleanup();
});

describe('the auth matrix', () => {
  it('has every route of the OpenAPI document, but those named in NOT_IN_MATRIX', async () => {
    const document = (await http().get('/openapi.json').expect(200)).body as { paths: Record<string, object> };
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map(
        (method) => `${method.toUpperCase()} ${path.replace(/\{path\}$/, '*').replace(/\{(\w+)\}/g, ':$1')}`,
      ),
    );
    const inMatrix = new Set(ROUTES.map((route) => `${route.method.toUpperCase()} ${route.route}`));
    expect(documented.filter((route) => !inMatrix.has(route) && !(route in NOT_IN_MATRIX))).toEqual([]);
    // And no route in the matrix that the document does not have (a typo would test nothing).
    expect([...inMatrix].filter((route) => !documented.includes(route))).toEqual([]);
  });

  const cells = ROUTES.flatMap((route) =>
    CALLERS.map((caller) => [`${route.method.toUpperCase()} ${route.route}`, caller, route] as const),
  );
  it.each(cells)('%s as %s', async (_, caller, route) => {
    const outcome: number | Refused = route.public
      ? route.expect.member
      : UNAUTHENTICATED.includes(caller)
        ? 401
        : route.expect[caller as keyof Expected];
    const expected = typeof outcome === 'number' ? outcome : 403;
    const path = await route.path(fx);
    let call = http()[route.method](path);
    const key = fx.keys[caller];
    if (key !== undefined) call = call.set('authorization', `Bearer ${key}`);
    const archive = await route.upload?.();
    const res = await (archive
      ? call.set('content-type', archive.contentType).send(archive.body)
      : route.body
        ? call.send(route.body)
        : call);
    // The body is part of the comparison so a failure shows why.
    expect({ status: res.status, body: res.body }).toMatchObject({ status: expected });
    if (expected === 401) {
      expect(res.body.code).toBe('UNAUTHENTICATED');
      expect(res.headers['www-authenticate']).toMatch(
        key === undefined
          ? /^Bearer realm="skillhost", error_description="[^"]+"$/
          : /^Bearer realm="skillhost", error="invalid_token", error_description="[^"]+"$/,
      );
    }
    // A token's refusal says it is the token (not a key) that no longer works.
    if (expected === 401 && (caller === 'expiredToken' || caller === 'revokedRefresh'))
      expect(res.body.message).toMatch(/access token/);
    if (expected === 403 && typeof outcome === 'number') expect(res.body.code).toBe('FORBIDDEN');
    if (typeof outcome !== 'number') {
      expect(res.body.code).toBe('INSUFFICIENT_SCOPE');
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="skillhost", error="insufficient_scope", scope="${outcome.insufficientScope}"`,
      );
    }
    if (expected === 404)
      expect(res.body.code).toBe(
        route.notFound ?? (route.route.includes('/keys/') ? 'API_KEY_NOT_FOUND' : 'CHAT_NOT_FOUND'),
      );
    // No cross-group reads: a skill shared with team-a is named in no answer to anyone outside it (but where the
    // request named it itself, or an admin route, which no one outside the admins reaches).
    const outside = caller === 'otherMember' || caller === 'otherGroup';
    if (outside && !path.includes('team-a-only') && !route.route.startsWith('/v1/admin/'))
      expect(JSON.stringify(res.body ?? '') + (res.text ?? '')).not.toContain('team-a-only');
  });
});

/**
 * The other doors, each as its own clients reach it: the callers whose credentials do not work are refused on every
 * one, and alice's `skills:read` token gets through those that need no more (`/mcp`, GraphQL's reads), never through
 * those that need `chats` (GraphQL's chat mutations, the OpenAI-compatible gateway). (The discovery index is a REST
 * route of the matrix above.)
 */
interface Door {
  name: string;
  send(key: string | undefined): Promise<Answer>;
  /** The error code of a refusal, in the door's own shape. */
  code(answer: Answer): string | undefined;
  /**
   * A GraphQL door: a resolver's refusal answers HTTP 200 with its status in the error's extensions, and no challenge
   * header (a 401 comes before any resolver, over HTTP, as on the other doors).
   */
  graphql?: true;
  /** Asserts the answer of a caller who may go through. */
  works(answer: Answer): void;
  /** What alice's `skills:read` token gets. */
  fewScopes: 'works' | Refused;
}

const graphql = (query: string) => (key: string | undefined) =>
  send(base, 'POST', '/graphql', { key, body: JSON.stringify({ query }), accept: 'application/json' });
const graphqlCode = (answer: Answer) => answer.json?.errors?.[0]?.extensions?.code as string | undefined;
const graphqlDoor = { code: graphqlCode, graphql: true } as const;
const openAICode = (answer: Answer) => (answer.json?.error?.code as string | undefined)?.toUpperCase();

const DOORS: Door[] = [
  {
    name: 'GraphQL mutation createChat',
    send: graphql('mutation { createChat(title: "door") { id title } }'),
    ...graphqlDoor,
    works: (answer) => expect(answer.json).toMatchObject({ data: { createChat: { title: 'door' } } }),
    fewScopes: { insufficientScope: 'chats' },
  },
  {
    name: 'GraphQL query skills',
    send: graphql('{ skills { skills { name } } }'),
    ...graphqlDoor,
    works: (answer) => expect(answer.json.data.skills.skills).toContainEqual({ name: 'pdf' }),
    fewScopes: 'works',
  },
  {
    name: 'MCP initialize',
    send: (key) =>
      send(base, 'POST', '/mcp', {
        key,
        body: rpcBody('initialize', {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'matrix', version: '1' },
        }),
      }),
    code: (answer) => answer.json?.error?.data?.code,
    works: (answer) => expect(answer.json).toMatchObject({ result: { serverInfo: { name: expect.any(String) } } }),
    fewScopes: 'works',
  },
  {
    name: 'gateway GET /openai/v1/models',
    send: (key) => send(base, 'GET', '/openai/v1/models', { key }),
    code: openAICode,
    works: (answer) => expect(answer.json.data).toContainEqual(expect.objectContaining({ id: 'scripted' })),
    fewScopes: { insufficientScope: 'chats' },
  },
  {
    name: 'gateway POST /openai/v1/chat/completions',
    send: (key) =>
      send(base, 'POST', '/openai/v1/chat/completions', {
        key,
        body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }),
      }),
    code: openAICode,
    works: (answer) => expect(answer.json.choices[0].message.content).toBe('ok'),
    fewScopes: { insufficientScope: 'chats' },
  },
];

describe('the other doors', () => {
  const cells = DOORS.flatMap((door) => CALLERS.map((caller) => [door.name, caller, door] as const));
  it.each(cells)('%s as %s', async (_, caller, door) => {
    const answer = await door.send(fx.keys[caller]);
    const shown = { status: answer.status, body: answer.json ?? answer.text };
    if (UNAUTHENTICATED.includes(caller)) {
      expect(shown).toMatchObject({ status: 401 });
      expect(door.code(answer)).toBe('UNAUTHENTICATED');
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="skillhost"/);
    } else if (caller === 'fewScopes' && door.fewScopes !== 'works') {
      expect(door.code(answer)).toBe('INSUFFICIENT_SCOPE');
      const scope = door.fewScopes.insufficientScope;
      if (door.graphql) {
        expect(shown).toMatchObject({ status: 200, body: { data: null, errors: [{ extensions: { status: 403 } }] } });
        expect(answer.json.errors[0].message).toContain(`'${scope}'`);
      } else {
        expect(shown).toMatchObject({ status: 403 });
        expect(answer.headers.get('www-authenticate')).toBe(
          `Bearer realm="skillhost", error="insufficient_scope", scope="${scope}"`,
        );
      }
    } else {
      expect(shown).toMatchObject({ status: 200 });
      door.works(answer);
    }
  });
});

/** A door that lists skills, and what it showed the caller with `key`. */
type Listing = [name: string, shown: (key: string) => Promise<string>];
const restListing = (path: string): Listing => [
  path,
  async (key) => (await http().get(path).set('authorization', `Bearer ${key}`).expect(200)).text,
];
const graphqlListing = (query: string): Listing => [
  `GraphQL ${query}`,
  async (key) => {
    const answer = await graphql(query)(key);
    expect({ status: answer.status, errors: answer.json.errors }).toEqual({ status: 200, errors: undefined });
    return answer.text;
  },
];
/** The gateway adds the caller's skills to the request the model gets: what the model was sent. */
const gatewayListing: Listing = [
  'the gateway, as the model sees the request',
  async (key) => {
    const before = ctx.model.requests.length;
    const answer = await DOORS.find((door) => door.name.includes('chat/completions'))!.send(key);
    expect(answer.status).toBe(200);
    return JSON.stringify(ctx.model.requests.slice(before));
  },
];

describe('the catalogue doors, by group', () => {
  it.each([
    restListing('/v1/skills'),
    restListing('/v1/skills-catalogue'),
    restListing('/v1/skills/search?q=team-a-only'),
    restListing('/.well-known/agent-skills/index.json'),
    restListing('/.well-known/agent-skills/versions.json'),
    graphqlListing('{ skills { skills { name description } } }'),
    graphqlListing('{ searchSkills(query: "team-a-only") { name } }'),
    gatewayListing,
  ])('%s lists team-a-only to team-a members only', async (_, shown) => {
    // One caller after another: the gateway's listing is what the model was sent meanwhile.
    const seen: Record<string, boolean> = {};
    for (const caller of ['member', 'otherMember', 'admin', 'editor', 'otherGroup'] as const)
      seen[caller] = (await shown(fx.keys[caller]!)).includes('team-a-only');
    expect(seen).toEqual({
      member: true,
      otherMember: false,
      admin: false,
      editor: true,
      otherGroup: false,
    });
  });
});
