import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';

describe('the real-agent harness', () => {
  let skillhost: AgentSkillhost;
  beforeAll(async () => {
    skillhost = await startAgentSkillhost();
  }, 300_000);
  afterAll(() => skillhost?.stop());

  it('serves the corpus skills to the working key and refuses the revoked and the wrong one', async () => {
    expect(skillhost.skills.map((skill) => skill.name)).toEqual(
      expect.arrayContaining(['internal-comms', 'brand-guidelines', 'systematic-debugging']),
    );
    const me = (key: string) =>
      fetch(`${skillhost.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${key}` } }).then(
        (response) => response.status,
      );
    expect(await me(skillhost.key)).toBe(200);
    expect(await me(skillhost.revokedKey)).toBe(401);
    expect(await me(skillhost.wrongKey)).toBe(401);
  });
});
