import { describe, expect, it } from '@jest/globals';
import type { StoredToolCard } from '@skillhost/core';
import { activationWay, type CallerSkills, callUsageEvents, type TurnUsage, turnUsageEvents } from './turn-usage.js';

function card(tool: string, skill: string | null, status: 'ok' | 'error' = 'ok'): StoredToolCard {
  return { id: tool, tool, args: {}, status, summary: { skill, truncated: false }, output: '', durationMs: 0 };
}

function turn(overrides: Partial<TurnUsage> = {}): TurnUsage {
  return {
    model: 'm',
    gateway: false,
    offered: [],
    activations: [],
    cards: [],
    versionOf: (skill) => (skill === 'pdf' ? 'sha256:p' : undefined),
    known: (skill) => skill === 'pdf' || skill === 'docx',
    ...overrides,
  };
}

describe(turnUsageEvents.name, () => {
  it('counts reads, script runs and failures of known skills; a made-up name counts nothing', () => {
    const events = turnUsageEvents(
      turn({
        cards: [
          card('skills.readResource', 'pdf'),
          card('skills.runScript', 'pdf', 'error'),
          card('skills.activate', 'made-up', 'error'),
          card('client.lookup', null),
        ],
      }),
    );
    expect(events.map((event) => [event.skill, event.counter, event.version])).toEqual([
      ['pdf', 'resourcesRead', 'sha256:p'],
      ['pdf', 'scriptsRun', 'sha256:p'],
      ['pdf', 'errors', 'sha256:p'],
      ['pdf', 'turns', 'sha256:p'],
    ]);
  });

  it('counts an activation at the version it was activated, and the turn once per skill', () => {
    const events = turnUsageEvents(
      turn({
        offered: ['docx', 'pdf'],
        activations: [{ skillName: 'pdf', how: 'tool', version: 'sha256:new' }],
        cards: [card('skills.activate', 'pdf'), card('skills.readResource', 'pdf')],
      }),
    );
    expect(events.map((event) => [event.skill, event.counter, event.version])).toEqual([
      ['docx', 'offered', undefined],
      ['pdf', 'offered', 'sha256:new'],
      ['pdf', 'activatedTool', 'sha256:new'],
      ['pdf', 'resourcesRead', 'sha256:new'],
      ['pdf', 'turns', 'sha256:new'],
    ]);
  });

  it("names each way: the gateway's turns as gateway, `/name` with or without tools as slash", () => {
    expect(activationWay('tool', false)).toBe('tool');
    expect(activationWay('explicit', false)).toBe('slash');
    expect(activationWay('fallback', false)).toBe('slash');
    expect(activationWay('command', false)).toBe('command');
    expect(activationWay('explicit', true)).toBe('gateway');
    expect(activationWay('tool', true)).toBe('gateway');
  });
});

describe(callUsageEvents.name, () => {
  const caller: CallerSkills = {
    known: (skill) => skill === 'pdf',
    versionOf: (skill) => (skill === 'pdf' ? 'sha256:pinned' : undefined),
  };

  it("counts an activation by the door's way at the version it activated, then the call's read or failure", () => {
    const activated = callUsageEvents(
      { card: card('skills.activate', 'pdf'), activated: 'pdf', version: 'sha256:new' },
      'api',
      caller,
    );
    expect(activated).toEqual([{ skill: 'pdf', version: 'sha256:new', counter: 'activatedApi' }]);
    const failedRead = callUsageEvents({ card: card('skills.readResource', 'pdf', 'error') }, 'mcp', caller);
    expect(failedRead).toEqual([
      { skill: 'pdf', version: 'sha256:pinned', counter: 'resourcesRead' },
      { skill: 'pdf', version: 'sha256:pinned', counter: 'errors' },
    ]);
  });

  it('counts nothing for a name the caller does not have, or a call on no skill', () => {
    expect(callUsageEvents({ card: card('skills.activate', 'made-up', 'error') }, 'api', caller)).toEqual([]);
    expect(callUsageEvents({ card: card('skills.search', null) }, 'api', caller)).toEqual([]);
  });
});
