import { chownSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'smol-toml';
import { checkSandbox } from '@skillhost/sandbox';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { type AppInstance, buildServer, startServerProcess } from '../support/instances.js';
import { tempTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * The server as the Docker image runs it: not root (`USER node`, uid 1000), scripts on. bubblewrap
 * then creates the sandbox from an unprivileged user namespace: the start-up check must pass and a
 * script must run as uid 65534 inside, seeing nothing of the server. When the tests run as root the
 * built server (`dist/src/main.js`) is started as uid 1000; otherwise as the tests' own user.
 */
const missing = await checkSandbox().then(
  () => undefined,
  (error: Error) => error.message,
);
const describeWithSandbox = missing === undefined ? describe : describe.skip;
if (missing !== undefined) console.warn(`SKIPPED non-root server script tests: ${missing}`);

const NODE_UID = 1000;

describeWithSandbox('scripts on a server that is not root (as the Docker image runs it)', () => {
  const tree = tempTree('skillhost-nonroot-');
  const asRoot = process.getuid?.() === 0;
  let db: TestDatabase;
  let server: AppInstance;

  beforeAll(async () => {
    buildServer();
    db = await createTestDatabase();
    writeSkill(tree, 'skills', 'probe', {
      description: 'Shows what a script sees.',
      extra: 'allowed-tools: Bash(sh:*)',
    });
    tree.write(
      'skills/probe/scripts/see.sh',
      '#!/bin/sh\necho "uid=$(id -u) PATH=$PATH"\necho "init: $(tr "\\000" " " < /proc/1/cmdline) / $(tr ' +
        '"\\000" " " < /proc/1/environ)"\nls /proc | grep -c "^[0-9]"\n',
    );
    const config = tree.write(
      'config.toml',
      stringify({
        app: {
          host: '127.0.0.1',
          port: 0,
          logging: { format: 'json' },
          database: { url: db.url },
          skills: { enabled: true, directories: [tree.path('skills')] },
          scripts: { enabled: true },
        },
      }),
    );
    // The server's own folder (its working directory, with the store's cache) belongs to its user.
    if (asRoot) chownTree(tree.root, NODE_UID);
    server = await startServerProcess(['node', `${process.cwd()}/dist/src/main.js`], {
      cwd: tree.root,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: tree.root,
        SKILLHOST_CONFIG: config,
        SKILLHOST_SERVER_SECRET: 'NON-ROOT-SECRET',
      },
      ...(asRoot ? { uid: NODE_UID } : {}),
    });
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    tree.cleanup();
  });

  it('passes the start-up check, and runs a script as uid 65534 that sees no server path or environment', async () => {
    expect(server.output()).toMatch(/Scripts enabled: bubblewrap sandbox/);
    const post = (path: string, body: unknown) =>
      fetch(`${server.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const chat = ((await (await post('/v1/chats', {})).json()) as { id: string }).id;
    const answer = await post(`/v1/chats/${chat}/tools/skills.runScript`, { name: 'probe', path: 'scripts/see.sh' });
    const card = ((await answer.json()) as { toolCard: { status: string; output: string } }).toolCard;
    expect(card.status).toBe('ok');
    const [, seen, init, processes] = card.output.trim().split('\n').slice(1);
    expect(seen).toBe('uid=65534 PATH=/usr/local/bin:/usr/bin:/bin');
    expect(init).toMatch(/^init: bwrap --args 3 -- \/usr\/bin\/prlimit .* \.\/scripts\/see\.sh {2}\/ $/);
    expect(Number(processes)).toBeLessThan(8);
    expect(card.output).not.toContain('NON-ROOT-SECRET');
    expect(card.output).not.toContain(tree.root);
  });
});

/** `chown -R uid:uid root`. */
function chownTree(root: string, uid: number): void {
  chownSync(root, uid, uid);
  for (const entry of readdirSync(root)) {
    const path = join(root, entry);
    if (statSync(path).isDirectory()) chownTree(path, uid);
    else chownSync(path, uid, uid);
  }
}
