import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the OAuth server for MCP clients (oidc-provider) keeps: registered clients, grants, codes, access and refresh
 * tokens, interactions and sign-in sessions, each a JSON payload under its model name and id (the provider's adapter
 * interface, https://github.com/panva/node-oidc-provider/blob/main/example/my_adapter.js). The columns beside the
 * payload are what the adapter looks up by (a grant's artifacts, an interaction's uid) and what a person's grant list
 * filters on (`account_id`); every instance reads the same rows, so a revocation holds everywhere.
 */
export class OAuthArtifacts1764820000000 implements MigrationInterface {
  name = 'OAuthArtifacts1764820000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE oauth_artifacts (
        model text NOT NULL,
        id text NOT NULL,
        payload jsonb NOT NULL,
        grant_id text,
        uid text,
        account_id text,
        expires_at timestamptz,
        consumed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_oauth_artifacts PRIMARY KEY (model, id)
      )`);
    await queryRunner.query(
      'CREATE INDEX ix_oauth_artifacts_grant ON oauth_artifacts (grant_id) WHERE grant_id IS NOT NULL',
    );
    await queryRunner.query('CREATE INDEX ix_oauth_artifacts_uid ON oauth_artifacts (uid) WHERE uid IS NOT NULL');
    await queryRunner.query(
      'CREATE INDEX ix_oauth_artifacts_account ON oauth_artifacts (account_id, model) WHERE account_id IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE INDEX ix_oauth_artifacts_expires ON oauth_artifacts (expires_at) WHERE expires_at IS NOT NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE oauth_artifacts');
  }
}
