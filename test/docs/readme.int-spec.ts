import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { ErrorCode, httpStatusOf } from '../../src/common/app-error.js';
import { renderConfigReference } from '../../src/config/config-schema.js';

const readme = readFileSync('README.md', 'utf8');

describe('README', () => {
  it('opens with the set-up command and the test command that CI runs', () => {
    const firstBlock = readme.split('```')[1];
    expect(firstBlock).toContain('npm ci && npm start');
    expect(firstBlock).toContain('npm test');
    expect(readFileSync('.ci/run', 'utf8')).toMatch(/^npm test$/m);
  });

  it('documents every configuration key, default and environment override as the code has them', () => {
    expect(readme).toContain(renderConfigReference());
  });

  it('documents every error code with its status', () => {
    for (const code of Object.values(ErrorCode)) expect(readme).toContain(`| \`${code}\` | ${httpStatusOf(code)} |`);
  });
});
