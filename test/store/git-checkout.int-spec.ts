import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@skillhost/core';
import { serveGitOverHttp } from '../support/git-http-server.js';
import { type GitRepo, gitRepo } from '../support/files/git-repo.js';
import { skillMd, tempTree, type TempTree } from '../support/files/skill-tree.js';
import { checkoutGit, pinnedTo } from '../../src/domain/skills/store/git-checkout.js';

const OPTIONS = { timeoutMs: 60_000, allowFile: false, destinations: undefined, submodules: false };

describe(checkoutGit.name, () => {
  let tree: TempTree;
  let repo: GitRepo;
  let git: { url: string; close: () => Promise<void> };
  let slow: Throttled;

  beforeAll(async () => {
    tree = tempTree('skillhost-git-checkout-');
    repo = gitRepo(tree.path('repo'));
    repo.commit(
      {
        'SKILL.md': skillMd({ name: 'big', description: 'Carries a large file.' }),
        'blob.bin': randomBytes(4 * 1024 * 1024).toString('base64'),
      },
      'big',
    );
    repo.push();
    git = await serveGitOverHttp(repo.bare);
    slow = await throttle(new URL(git.url).port);
  });
  afterAll(async () => {
    await slow?.close();
    await git?.close();
    tree?.cleanup();
  });

  it('stops git while it still downloads, once the clone grows past its cap', async () => {
    const into = tree.path('capped');
    const started = Date.now();
    await expect(
      checkoutGit(`${slow.url}/bare.git`, undefined, into, { ...OPTIONS, maxBytes: 1024 * 1024 }),
    ).rejects.toMatchObject({ code: ErrorCode.IMPORT_TOO_LARGE });
    // The pack comes at 1 MiB a second: a cap checked only at the end would have waited for all of it.
    expect(Date.now() - started).toBeLessThan(4000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(slow.aborted).toBeGreaterThan(0);
    expect(existsSync(into)).toBe(true);
  });

  it('pins a host to a checked address: git connects there whatever the name resolves to', async () => {
    const port = Number.parseInt(new URL(git.url).port, 10);
    // `.invalid` never resolves (RFC 2606): only the pin can make this work. (Not execFileSync: the server is here.)
    const { stdout } = await promisify(execFile)(
      'git',
      [
        ...pinnedTo({ host: 'skills.invalid', port, addresses: ['127.0.0.1'] }),
        'ls-remote',
        `http://skills.invalid:${port}/bare.git`,
      ],
      {
        encoding: 'utf8',
        timeout: 20_000,
        env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      },
    );
    expect(stdout).toContain('refs/heads/main');
  });
});

interface Throttled {
  url: string;
  /** Responses whose reader went away before the end. */
  aborted: number;
  close(): Promise<void>;
}

/** A proxy to 127.0.0.1:`port` that passes answers on at 64 KiB every 60 ms (about 1 MiB a second). */
async function throttle(port: string): Promise<Throttled> {
  const state = { aborted: 0 };
  const server: Server = createServer((req, res) => {
    const upstream = request(
      { host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers },
      async (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const chunks: Buffer[] = [];
        for await (const chunk of answer) chunks.push(chunk as Buffer);
        const body = Buffer.concat(chunks);
        for (let at = 0; at < body.length; at += 64 * 1024) {
          if (res.destroyed) {
            state.aborted++;
            return;
          }
          res.write(body.subarray(at, at + 64 * 1024));
          await new Promise((resolve) => setTimeout(resolve, 60));
        }
        res.end();
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get aborted() {
      return state.aborted;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
