/** One thing the OAuth server keeps (a client, grant, code, token, interaction, session), as its adapter stores it. */
export type OAuthPayload = Record<string, unknown>;

/** A grant a person gave a client, as their grant list shows it. */
export interface ListedOAuthGrant {
  grantId: string;
  clientId: string;
  clientName: string | null;
  scopes: string[];
  resources: string[];
  createdAt: Date;
  expiresAt: Date | null;
}

/**
 * The OAuth server's storage (oidc-provider's adapter interface, by model name), plus what a person's grant list
 * needs. `null` for "no such artifact" (or expired).
 */
export interface OAuthArtifactStore {
  upsert(model: string, id: string, payload: OAuthPayload, expiresInSeconds: number | undefined): Promise<void>;
  find(model: string, id: string): Promise<OAuthPayload | null>;
  findByUid(model: string, uid: string): Promise<OAuthPayload | null>;
  findByUserCode(model: string, userCode: string): Promise<OAuthPayload | null>;
  consume(model: string, id: string): Promise<void>;
  destroy(model: string, id: string): Promise<void>;
  /** Every artifact of a grant (its codes and tokens) and the grant itself. */
  revokeByGrantId(grantId: string): Promise<void>;
  /** The grants `accountId` gave, newest first (unexpired only). */
  listGrants(accountId: string): Promise<ListedOAuthGrant[]>;
  /** Removes a grant of `accountId` and everything issued under it; false when they have no such grant. */
  revokeGrant(accountId: string, grantId: string): Promise<boolean>;
  /**
   * Deletes what expired more than a day ago (kept that long so a replayed code still finds its grant revoked), and
   * registered clients older than `unusedClientDays` that hold no live grant (a client registered and never consented
   * to, or whose grants all ended): open registration must not grow the table for ever.
   */
  deleteExpired(unusedClientDays: number): Promise<number>;
  /** A value made once and shared by every instance (signing and cookie keys): `make()` only if none is stored. */
  sharedSecret(name: string, make: () => OAuthPayload): Promise<OAuthPayload>;
}

export const OAUTH_ARTIFACT_STORE = Symbol('OAUTH_ARTIFACT_STORE');
