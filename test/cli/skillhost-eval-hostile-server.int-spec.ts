import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tempTree } from '../support/files/skill-tree.js';
import { run } from './run-cli.js';

/** What the hostile server answers to the next request: a status, a content type and a body. */
interface Answer {
  status: number;
  type?: string;
  body: string;
  headers?: Record<string, string>;
}

/**
 * `skillhost eval --server` against servers that are not the Skillhost it expects: unreachable, redirecting, answering
 * a 500, text, or JSON of another shape. Each is a one-line error and exit 1, with no stack trace, and the key is sent
 * nowhere else.
 */
describe('skillhost eval --server against a hostile or broken server', () => {
  const tree = tempTree('skillhost-eval-hostile-');
  const KEY = 'skh_hostilehostilehostilehostilehostile';
  let server: Server;
  let base: string;
  let answer: Answer = { status: 200, body: '{}' };
  const seen: { url: string; authorization?: string }[] = [];
  const evalOn = (url: string, ...argv: string[]) =>
    run(['eval', '--server', url, 'spec-writer', ...argv], tree.root, { SKILLHOST_API_KEY: KEY });

  beforeAll(async () => {
    server = createServer((request, response) => {
      seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
      response.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json', ...answer.headers });
      response.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    tree.cleanup();
  });

  it('says a server that cannot be reached cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await evalOn(`http://127.0.0.1:${port}`);
    expect(result).toMatchObject({ code: 1, out: '' });
    expect(result.err).toMatch(/^Cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/admin\/skills\/spec-writer\/evals \(/);
  });

  it('refuses to follow a redirect, so the key goes nowhere else', async () => {
    answer = { status: 302, body: '', headers: { location: 'http://127.0.0.2:1/steal' } };
    seen.length = 0;
    const result = await evalOn(base);
    expect(result).toMatchObject({ code: 1, out: '' });
    expect(result.err).toContain('Cannot reach');
    expect(seen).toEqual([{ url: '/v1/admin/skills/spec-writer/evals', authorization: `Bearer ${KEY}` }]);
  });

  it("tells a 500 or a page that is not JSON in the server's words, one line", async () => {
    answer = { status: 500, type: 'text/html', body: '<html>\n<h1>Bad gateway</h1>\n</html>' };
    const failed = await evalOn(base);
    expect(failed).toMatchObject({ code: 1, out: '' });
    expect(failed.err).toBe(
      `${base}/v1/admin/skills/spec-writer/evals answered 500: <html> <h1>Bad gateway</h1> </html>.`,
    );
    answer = { status: 200, type: 'text/html', body: '<html>a login page</html>' };
    const page = await evalOn(base);
    expect(page).toMatchObject({ code: 1, out: '' });
    expect(page.err).toContain('answered 200: <html>a login page</html>');
  });

  const CATALOGUE_RUN = {
    level: 'catalogue',
    limits: { budgetTokens: 4000, maxSkills: 50 },
    skills: [],
    withoutEvals: ['spec-writer'],
    invalid: [],
  };

  it('reports a run of the expected shape', async () => {
    answer = { status: 200, body: JSON.stringify(CATALOGUE_RUN) };
    const result = await evalOn(base);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain('Without trigger evals: spec-writer');
  });

  it("prints a server's control characters as escapes, never to the terminal", async () => {
    // Regression, fixed since a hostile pass found it. Was: a name, an invalid file's problem or a refusal printed as
    // it came, so ESC [2J (clear the screen) or a C1 CSI reached the terminal.
    answer = {
      status: 200,
      body: JSON.stringify({
        ...CATALOGUE_RUN,
        withoutEvals: ['\u001b[2Jgone'],
        invalid: [{ skill: 'x\u009b31m', problems: ['evals/triggers.json: not JSON (\u0007)'] }],
      }),
    };
    const result = await evalOn(base);
    expect(result.out.split('\n').slice(1)).toEqual([
      'x\\u009b31m: evals not valid: evals/triggers.json: not JSON (\\u0007)',
      'Without trigger evals: \\u001b[2Jgone',
    ]);
    expect(/\p{Cc}/u.test(result.out.replaceAll('\n', ''))).toBe(false);
    const json = await evalOn(base, '--json');
    expect(json.out).not.toMatch(/[\u0080-\u009f]/);
    expect(JSON.parse(json.out).invalid[0].skill).toBe('x\u009b31m');
    answer = { status: 500, type: 'text/plain', body: 'oops \u001b[2J' };
    const refused = await evalOn(base);
    expect(refused.err).toBe(`${base}/v1/admin/skills/spec-writer/evals answered 500: oops \\u001b[2J.`);
  });

  it('refuses JSON that is not an eval run, at either level, instead of failing on it', async () => {
    // Regression, fixed since a hostile pass found it. Was: a TypeError ("Cannot read properties of undefined
    // (reading 'flatMap')") thrown out of the command, a stack trace instead of an error.
    for (const [body, argv] of [
      ['{}', []],
      ['[]', []],
      ['{"level":"catalogue","skills":"no"}', []],
      ['null', ['--level', 'model']],
      ['{"skill":"spec-writer"}', ['--level', 'model']],
    ] as const) {
      answer = { status: 200, body };
      const result = await evalOn(base, ...argv);
      expect(result).toEqual({
        code: 1,
        out: '',
        err:
          `${base}/v1/admin/skills/spec-writer/evals answered 200 with JSON that is not a trigger eval run; is ` +
          `${base}/ a Skillhost server?`,
      });
    }
  });

  it('refuses bad options with usage (exit 2) before calling anything', async () => {
    seen.length = 0;
    for (const argv of [
      ['eval', '--server', 'ftp://example.com', 'x'],
      ['eval', '--server', 'not a url', 'x'],
      ['eval', '--server', 'http://user:pw@127.0.0.1:1', 'x'],
      ['eval', '--server', base, '--level', 'telepathy', 'x'],
      ['eval', '--server', base, '--model', 'scripted', 'x'],
      ['eval', '--key-env', 'K', 'x'],
      ['eval', '--server', base, '--nope', 'x'],
    ]) {
      const result = await run(argv, tree.root, { SKILLHOST_API_KEY: KEY });
      expect(result.code).toBe(2);
      expect(result.err.split('\n')[0]).not.toBe('');
    }
    expect(seen).toEqual([]);
  });
});
