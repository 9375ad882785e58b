import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { renderConfigReference } from '../../src/config/config-schema.js';
import { renderErrorReference } from '../../src/openapi/error-code-descriptions.js';

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

  it('documents every error code with its status, as the OpenAPI document describes it', () => {
    expect(readme).toContain(renderErrorReference());
  });
});
