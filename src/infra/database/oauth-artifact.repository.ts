import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ListedOAuthGrant, OAuthArtifactStore, OAuthPayload } from '../../domain/oauth/oauth-artifact-store.js';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/** The model under which values shared by every instance (keys) are kept; the provider never uses this name. */
const SHARED_MODEL = 'SkillhostShared';
const LIVE = '(expires_at IS NULL OR expires_at > now())';

/**
 * oidc-provider's artifacts in `oauth_artifacts` (migration 1764820000000): a JSON payload per model and id, with
 * the columns it is looked up by copied out of the payload when written.
 */
@Injectable()
export class OAuthArtifactRepository implements OAuthArtifactStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  upsert(model: string, id: string, payload: OAuthPayload, expiresInSeconds: number | undefined): Promise<void> {
    return this.run(
      `INSERT INTO oauth_artifacts (model, id, payload, grant_id, uid, account_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7) END)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         uid = EXCLUDED.uid, account_id = EXCLUDED.account_id, expires_at = EXCLUDED.expires_at`,
      [
        model,
        id,
        JSON.stringify(payload),
        textOf(payload.grantId),
        textOf(payload.uid),
        textOf(payload.accountId),
        expiresInSeconds ?? null,
      ],
    );
  }

  find(model: string, id: string): Promise<OAuthPayload | null> {
    return this.one(`WHERE model = $1 AND id = $2 AND ${LIVE}`, [model, id]);
  }

  findByUid(model: string, uid: string): Promise<OAuthPayload | null> {
    return this.one(`WHERE model = $1 AND uid = $2 AND ${LIVE}`, [model, uid]);
  }

  findByUserCode(model: string, userCode: string): Promise<OAuthPayload | null> {
    return this.one(`WHERE model = $1 AND payload->>'userCode' = $2 AND ${LIVE}`, [model, userCode]);
  }

  consume(model: string, id: string): Promise<void> {
    return this.run('UPDATE oauth_artifacts SET consumed_at = now() WHERE model = $1 AND id = $2', [model, id]);
  }

  destroy(model: string, id: string): Promise<void> {
    return this.run('DELETE FROM oauth_artifacts WHERE model = $1 AND id = $2', [model, id]);
  }

  revokeByGrantId(grantId: string): Promise<void> {
    return this.run(`DELETE FROM oauth_artifacts WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [grantId]);
  }

  listGrants(accountId: string): Promise<ListedOAuthGrant[]> {
    return runQuery(async () => {
      const rows: {
        id: string;
        payload: OAuthPayload;
        client: OAuthPayload | null;
        created_at: Date;
        expires_at: Date | null;
      }[] = await this.dataSource.query(
        `SELECT g.id, g.payload, c.payload AS client, g.created_at, g.expires_at
           FROM oauth_artifacts g
           LEFT JOIN oauth_artifacts c ON c.model = 'Client' AND c.id = g.payload->>'clientId'
           WHERE g.model = 'Grant' AND g.account_id = $1 AND (g.expires_at IS NULL OR g.expires_at > now())
           ORDER BY g.created_at DESC, g.id`,
        [accountId],
      );
      return rows.map((row) => presentGrant(row.id, row.payload, row.client, row.created_at, row.expires_at));
    });
  }

  revokeGrant(accountId: string, grantId: string): Promise<boolean> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [, owned] = (await manager.query(
          `DELETE FROM oauth_artifacts WHERE model = 'Grant' AND id = $1 AND account_id = $2 RETURNING id`,
          [grantId, accountId],
        )) as [unknown[], number];
        if (owned === 0) return false;
        await manager.query('DELETE FROM oauth_artifacts WHERE grant_id = $1', [grantId]);
        return true;
      }),
    );
  }

  deleteExpired(unusedClientDays: number): Promise<number> {
    return runQuery(async () => {
      const [, expired] = (await this.dataSource.query(
        "DELETE FROM oauth_artifacts WHERE expires_at < now() - interval '1 day'",
      )) as [unknown[], number];
      const [, unused] = (await this.dataSource.query(
        `DELETE FROM oauth_artifacts c WHERE c.model = 'Client' AND c.created_at < now() - make_interval(days => $1)
           AND NOT EXISTS (SELECT 1 FROM oauth_artifacts g WHERE g.model = 'Grant' AND g.payload->>'clientId' = c.id
                             AND (g.expires_at IS NULL OR g.expires_at > now()))`,
        [unusedClientDays],
      )) as [unknown[], number];
      return expired + unused;
    });
  }

  sharedSecret(name: string, make: () => OAuthPayload): Promise<OAuthPayload> {
    return runQuery(async () => {
      // Several instances starting at once each make one; the first written is the one all of them use.
      await this.dataSource.query(
        `INSERT INTO oauth_artifacts (model, id, payload) VALUES ($1, $2, $3) ON CONFLICT (model, id) DO NOTHING`,
        [SHARED_MODEL, name, JSON.stringify(make())],
      );
      const found = await this.one('WHERE model = $1 AND id = $2', [SHARED_MODEL, name]);
      return found!;
    });
  }

  private async one(where: string, parameters: unknown[]): Promise<OAuthPayload | null> {
    return runQuery(async () => {
      const rows: { payload: OAuthPayload; consumed_at: Date | null }[] = await this.dataSource.query(
        `SELECT payload, consumed_at FROM oauth_artifacts ${where}`,
        parameters,
      );
      if (rows.length === 0) return null;
      const { payload, consumed_at } = rows[0];
      // The provider reads `consumed` to refuse a code (or rotated refresh token) used twice.
      return consumed_at === null ? payload : { ...payload, consumed: Math.floor(consumed_at.getTime() / 1000) };
    });
  }

  private run(sql: string, parameters: unknown[]): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query(sql, parameters);
    });
  }
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A grant's payload as oidc-provider writes it: `openid.scope` and `resources` (resource → scope string). */
function presentGrant(
  id: string,
  grant: OAuthPayload,
  client: OAuthPayload | null,
  createdAt: Date,
  expiresAt: Date | null,
): ListedOAuthGrant {
  const resources = (grant.resources ?? {}) as Record<string, string>;
  const scopes = new Set<string>();
  for (const scope of Object.values(resources)) for (const item of scope.split(' ')) if (item) scopes.add(item);
  return {
    grantId: id,
    clientId: String(grant.clientId),
    clientName: typeof client?.client_name === 'string' ? client.client_name : null,
    scopes: [...scopes].sort(),
    resources: Object.keys(resources).sort(),
    createdAt,
    expiresAt,
  };
}
