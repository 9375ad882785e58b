import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { SignInAttempt, SignInStore } from '../../domain/sign-in/sign-in-store.js';
import type { SessionOwner, WebSessionStore } from '../../domain/users/web-session-store.js';
import type { User, UserRole } from '../../domain/users/user.types.js';
import { isUniqueViolation, runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface UserRow {
  id: string;
  name: string;
  role: UserRole;
  disabled: boolean;
  created_at: Date;
}

const USER_COLUMNS = 'u.id, u.name, u.role, u.disabled, u.created_at';

/** Sign-ins under way, links from a provider's subjects to users, and web sessions (their tokens hashed). */
@Injectable()
export class SignInRepository implements SignInStore, WebSessionStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  saveAttempt(attempt: SignInAttempt): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query(
        'INSERT INTO sign_in_attempts (state_hash, browser_hash, code_verifier, nonce, return_to, expires_at) ' +
          'VALUES ($1, $2, $3, $4, $5, $6)',
        [
          attempt.stateHash,
          attempt.browserHash,
          attempt.codeVerifier,
          attempt.nonce,
          attempt.returnTo,
          attempt.expiresAt,
        ],
      );
    });
  }

  takeAttempt(stateHash: string): Promise<SignInAttempt | null> {
    return runQuery(async () => {
      const [rows] = await this.dataSource.query<
        [
          {
            state_hash: string;
            browser_hash: string;
            code_verifier: string;
            nonce: string;
            return_to: string;
            expires_at: Date;
          }[],
          number,
        ]
      >('DELETE FROM sign_in_attempts WHERE state_hash = $1 RETURNING *', [stateHash]);
      const row = rows[0];
      if (row === undefined) return null;
      return {
        stateHash: row.state_hash,
        browserHash: row.browser_hash,
        codeVerifier: row.code_verifier,
        nonce: row.nonce,
        returnTo: row.return_to,
        expiresAt: row.expires_at,
      };
    });
  }

  findLinkedUser(issuer: string, subject: string): Promise<User | null> {
    return this.oneUser(
      `SELECT ${USER_COLUMNS} FROM user_identities i JOIN users u ON u.id = i.user_id ` +
        'WHERE i.issuer = $1 AND i.subject = $2',
      [issuer, subject],
    );
  }

  findUserByEmail(email: string): Promise<User | null> {
    return this.oneUser(`SELECT ${USER_COLUMNS} FROM users u WHERE lower(u.email) = lower($1)`, [email]);
  }

  link(issuer: string, subject: string, userId: string): Promise<boolean> {
    return runQuery(async () => {
      const inserted = await this.dataSource.query<unknown[]>(
        'INSERT INTO user_identities (issuer, subject, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING ' +
          'RETURNING user_id',
        [issuer, subject, userId],
      );
      return inserted.length === 1;
    });
  }

  createMember(name: string, email: string | null): Promise<User | null> {
    return runQuery(async () => {
      try {
        const rows = await this.dataSource.query<UserRow[]>(
          "INSERT INTO users (name, role, email) VALUES ($1, 'member', $2) RETURNING id, name, role, disabled, " +
            'created_at',
          [name, email],
        );
        return toUser(rows[0]);
      } catch (error) {
        if (isUniqueViolation(error, 'uq_users_name') || isUniqueViolation(error, 'uq_users_email')) return null;
        throw error;
      }
    });
  }

  mapUser(
    userId: string,
    changes: { email?: string | null; issuer: string; subject?: string },
  ): Promise<{ email: string | null } | 'taken' | null> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [user] = await manager.query<{ email: string | null }[]>(
          'SELECT email FROM users WHERE id = $1 FOR UPDATE',
          [userId],
        );
        if (user === undefined) return null;
        try {
          if (changes.email !== undefined)
            await manager.query('UPDATE users SET email = $2 WHERE id = $1', [userId, changes.email]);
          if (changes.subject !== undefined) {
            const [linked] = await manager.query<{ user_id: string }[]>(
              'INSERT INTO user_identities (issuer, subject, user_id) VALUES ($1, $2, $3) ' +
                'ON CONFLICT (issuer, subject) DO UPDATE SET user_id = user_identities.user_id RETURNING user_id',
              [changes.issuer, changes.subject, userId],
            );
            if (linked.user_id !== userId) throw new SubjectTaken();
          }
        } catch (error) {
          if (error instanceof SubjectTaken || isUniqueViolation(error, 'uq_users_email')) return 'taken';
          throw error;
        }
        return { email: changes.email === undefined ? user.email : changes.email };
      }),
    );
  }

  createSession(session: { tokenHash: string; userId: string; expiresAt: Date }): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query('INSERT INTO web_sessions (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [
        session.tokenHash,
        session.userId,
        session.expiresAt,
      ]);
    });
  }

  findSession(tokenHash: string): Promise<SessionOwner | null> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<
        {
          id: string;
          expires_at: Date;
          last_seen_at: Date;
          user_id: string;
          name: string;
          role: UserRole;
          disabled: boolean;
        }[]
      >(
        'SELECT s.id, s.expires_at, s.last_seen_at, u.id AS user_id, u.name, u.role, u.disabled ' +
          'FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1',
        [tokenHash],
      );
      const row = rows[0];
      if (row === undefined) return null;
      return {
        sessionId: row.id,
        expiresAt: row.expires_at,
        lastSeenAt: row.last_seen_at,
        userId: row.user_id,
        userName: row.name,
        role: row.role,
        disabled: row.disabled,
      };
    });
  }

  touchSession(sessionId: string): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query('UPDATE web_sessions SET last_seen_at = now() WHERE id = $1', [sessionId]);
    });
  }

  deleteSession(tokenHash: string): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query('DELETE FROM web_sessions WHERE token_hash = $1', [tokenHash]);
    });
  }

  sweep(idleBefore: Date): Promise<number> {
    return runQuery(async () => {
      const [, sessions] = await this.dataSource.query<[unknown, number]>(
        'DELETE FROM web_sessions WHERE expires_at <= now() OR last_seen_at < $1',
        [idleBefore],
      );
      const [, attempts] = await this.dataSource.query<[unknown, number]>(
        'DELETE FROM sign_in_attempts WHERE expires_at <= now()',
      );
      return sessions + attempts;
    });
  }

  private oneUser(sql: string, parameters: unknown[]): Promise<User | null> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<UserRow[]>(sql, parameters);
      return rows[0] === undefined ? null : toUser(rows[0]);
    });
  }
}

class SubjectTaken extends Error {}

function toUser(row: UserRow): User {
  return { id: row.id, name: row.name, role: row.role, disabled: row.disabled, createdAt: row.created_at };
}
