import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { configWith } from '../../src/config/config-loader.js';
import type { OidcProviderClient } from '../../src/domain/sign-in/oidc-provider.client.js';
import type { ProviderGroupsSink } from '../../src/domain/users/provider-groups.js';
import { SignInService } from '../../src/domain/sign-in/sign-in.service.js';
import { WebSessionService } from '../../src/domain/users/web-session.service.js';
import { createDataSource } from '../../src/infra/database/data-source.js';
import { migrate } from '../../src/infra/database/migrate.js';
import { SignInRepository } from '../../src/infra/database/sign-in.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

const ISSUER = 'https://login.example.com';

/**
 * Who a person signs in as, on a real PostgreSQL: links kept per issuer and subject, an admin's mapping, users made
 * only when allowed, a taken name never adopted, and the groups claim handed to the groups port. The provider is
 * the one stand-in (its protocol is tested against a real provider in oidc-sign-in.e2e-spec.ts): it answers the
 * claims each test gives.
 */
describe(SignInService.name, () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let repository: SignInRepository;
  let claims: Record<string, unknown>;
  const handedGroups: { userId: string; names: readonly string[] }[] = [];
  const groups: ProviderGroupsSink = {
    setProviderGroups: async (userId, names) => void handedGroups.push({ userId, names }),
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.url, 'run', () => undefined);
    dataSource = createDataSource(db.url, { poolSize: 2 });
    await dataSource.initialize();
    repository = new SignInRepository(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  function sutWith(settings: Record<string, unknown> = {}): SignInService {
    const config = configWith({
      'app.database.url': db.url,
      'app.auth.oidc.issuer': ISSUER,
      'app.auth.oidc.client_id': 'skillhost',
      'app.auth.oidc.groups_claim': 'groups',
      ...Object.fromEntries(Object.entries(settings).map(([key, value]) => [`app.auth.oidc.${key}`, value])),
    });
    const provider = {
      issuer: ISSUER,
      enabled: true,
      authorizationUrl: async ({ state }: { state: string }) => new URL(`${ISSUER}/auth?state=${state}`),
      exchange: async () => claims,
    } as unknown as OidcProviderClient;
    return new SignInService(config, repository, provider, new WebSessionService(config, repository), groups);
  }

  /** One whole sign-in of the person `claims` describes: started, answered by this browser. */
  async function signIn(sut: SignInService, person: Record<string, unknown>) {
    claims = person;
    const started = await sut.start('/', 'http://127.0.0.1:3000');
    const state = new URL(started.location).searchParams.get('state')!;
    const browser = /skillhost_sign_in=([^;]+)/.exec(started.setCookie)![1];
    return sut.finish(
      new URLSearchParams({ code: 'c', state }),
      `skillhost_sign_in=${browser}`,
      'http://127.0.0.1:3000',
    );
  }

  it('makes a member at first sign-in, keeps the link, and hands the groups to the groups port', async () => {
    const sut = sutWith();
    const first = await signIn(sut, { sub: 's-ada', preferred_username: 'Ada', groups: ['eng', 'eng', 'ops'] });
    expect(first.user).toMatchObject({ name: 'ada', role: 'member' });
    expect(handedGroups).toEqual([{ userId: first.user.id, names: ['eng', 'ops'] }]);
    // The same subject with another name and email later is still the same user.
    const again = await signIn(sut, { sub: 's-ada', preferred_username: 'Ada L', email: 'x@example.com' });
    expect(again.user.id).toBe(first.user.id);
    expect(await query(db.url, "SELECT count(*)::int AS n FROM users WHERE name LIKE 'ada%'")).toEqual([{ n: 1 }]);
  });

  it('never signs a person in as an unlinked user who has their name', async () => {
    await query(db.url, "INSERT INTO users (name, role) VALUES ('grace', 'admin')");
    await expect(signIn(sutWith(), { sub: 's-grace', preferred_username: 'grace' })).rejects.toMatchObject({
      code: 'SIGN_IN_USER_CONFLICT',
    });
    expect(
      await query(db.url, 'SELECT 1 FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE u.name = $1', ['grace']),
    ).toEqual([]);
  });

  it('with create_users false, signs in only people an admin linked, by subject or by email', async () => {
    const sut = sutWith({ create_users: false });
    await expect(signIn(sut, { sub: 's-lin', preferred_username: 'lin' })).rejects.toMatchObject({
      code: 'SIGN_IN_NOT_ALLOWED',
    });
    const [linus] = await query<{ id: string }>(
      db.url,
      "INSERT INTO users (name, role) VALUES ('linus', 'member') RETURNING id",
    );
    expect(await sut.mapUser(linus.id, { subject: 's-lin' })).toEqual({ email: null });
    expect((await signIn(sut, { sub: 's-lin', preferred_username: 'lin' })).user.name).toBe('linus');

    const [mary] = await query<{ id: string }>(
      db.url,
      "INSERT INTO users (name, role) VALUES ('mary', 'member') RETURNING id",
    );
    expect(await sut.mapUser(mary.id, { email: 'Mary@Example.com' })).toEqual({ email: 'Mary@Example.com' });
    const person = { sub: 's-mary', preferred_username: 'm', email: 'mary@example.com' };
    await expect(signIn(sut, { ...person, email_verified: false })).rejects.toMatchObject({
      code: 'SIGN_IN_NOT_ALLOWED',
    });
    expect((await signIn(sut, { ...person, email_verified: true })).user.name).toBe('mary');
  });

  it("refuses an admin's mapping that takes another user's subject or email, or names no user", async () => {
    const sut = sutWith();
    const [other] = await query<{ id: string }>(
      db.url,
      "INSERT INTO users (name, role) VALUES ('other', 'member') RETURNING id",
    );
    await expect(sut.mapUser(other.id, { subject: 's-lin' })).rejects.toMatchObject({ code: 'SIGN_IN_USER_CONFLICT' });
    await expect(sut.mapUser(other.id, { email: 'MARY@example.com' })).rejects.toMatchObject({
      code: 'SIGN_IN_USER_CONFLICT',
    });
    await expect(sut.mapUser('00000000-0000-4000-8000-00000000abcd', { email: null })).rejects.toMatchObject({
      code: 'USER_NOT_FOUND',
    });
    await expect(sut.mapUser(other.id, { email: 'not an email' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('refuses a disabled user, and takes each answer once', async () => {
    const sut = sutWith();
    await query(db.url, "UPDATE users SET disabled = true WHERE name = 'mary'");
    await expect(signIn(sut, { sub: 's-mary', preferred_username: 'm' })).rejects.toMatchObject({
      code: 'SIGN_IN_NOT_ALLOWED',
    });
    claims = { sub: 's-ada', preferred_username: 'Ada' };
    const started = await sut.start('/', 'http://127.0.0.1:3000');
    const state = new URL(started.location).searchParams.get('state')!;
    const cookie = `skillhost_sign_in=${/skillhost_sign_in=([^;]+)/.exec(started.setCookie)![1]}`;
    const answer = new URLSearchParams({ code: 'c', state });
    await sut.finish(answer, cookie, 'http://127.0.0.1:3000');
    await expect(sut.finish(answer, cookie, 'http://127.0.0.1:3000')).rejects.toMatchObject({
      code: 'SIGN_IN_STATE_INVALID',
    });
  });
});
