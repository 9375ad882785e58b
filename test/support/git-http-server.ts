import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';

/**
 * Git's smart HTTP protocol on 127.0.0.1: each request runs `git http-backend` as a CGI program over
 * the folder that holds `bare` (served as `/<name of bare>`), as a web server in front of git does.
 */
export async function serveGitOverHttp(bare: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const backend = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: dirname(bare),
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        ...(req.headers['git-protocol'] === undefined ? {} : { GIT_PROTOCOL: String(req.headers['git-protocol']) }),
      },
    });
    req.pipe(backend.stdin);
    const chunks: Buffer[] = [];
    backend.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    backend.on('close', () => {
      // A CGI answer: header lines, a blank line, the body.
      const output = Buffer.concat(chunks);
      const end = output.indexOf('\r\n\r\n');
      const headers = output.subarray(0, end).toString('latin1').split('\r\n');
      let status = 200;
      for (const line of headers) {
        const [name, ...rest] = line.split(':');
        const value = rest.join(':').trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.statusCode = status;
      res.end(output.subarray(end + 4));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
