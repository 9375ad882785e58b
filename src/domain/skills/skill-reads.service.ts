import { Inject, Injectable } from '@nestjs/common';
import { type ActivatedSkill, AppError, type CatalogueSnapshot, type SkillResource } from '@skillhost/core';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { SKILL_USAGE_RECORDER, type UsageCounter, type UsageRecorder } from './usage/skill-usage.js';

/**
 * A user's reads of a skill outside any chat (REST `GET /v1/skills/:name/body` and `/resources/*`, GraphQL
 * `skillResource`; the web page's skill view asks for a preview, which is not counted), from the user's view. In the
 * usage funnel they count as a skill tool's call would: the instructions as an activation by the API (`api`), a file as
 * a resource read, and a failure on a skill of the view as an error; no model, no turn.
 */
@Injectable()
export class SkillReadsService {
  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    @Inject(SKILL_USAGE_RECORDER) private readonly usage: UsageRecorder,
  ) {}

  /** The skill's instructions (level 2); a preview (a person looking at them) is not counted. */
  async instructions(userId: string, name: string, options: { preview?: boolean } = {}): Promise<ActivatedSkill> {
    const snapshot = await this.registry.userView(userId);
    const read = () => this.resources.activate(name, { snapshot });
    return options.preview === true ? read() : this.counted(snapshot, name, 'activatedApi', read);
  }

  /** One of the skill's files as text, size-capped (level 3). */
  async resource(userId: string, name: string, path: string): Promise<SkillResource> {
    const snapshot = await this.registry.userView(userId);
    return this.counted(snapshot, name, 'resourcesRead', () => this.resources.readResource(name, path, { snapshot }));
  }

  /**
   * Runs the read and counts it: done, by its counter; failed on a skill of the view, as an error (a read tried
   * counts as a read, as a tool call's does). A name the view does not have counts nothing.
   */
  private async counted<T extends { name: string }>(
    snapshot: CatalogueSnapshot,
    name: string,
    counter: UsageCounter,
    read: () => Promise<T>,
  ): Promise<T> {
    let result: T;
    try {
      result = await read();
    } catch (error) {
      const skill = snapshot.skills.get(name);
      if (skill !== undefined && AppError.isInstance(error)) {
        const at = { skill: skill.name, version: skill.digest };
        this.usage.record(
          counter === 'resourcesRead'
            ? [
                { ...at, counter },
                { ...at, counter: 'errors' },
              ]
            : [{ ...at, counter: 'errors' }],
        );
      }
      throw error;
    }
    this.usage.record([{ skill: result.name, version: snapshot.skills.get(result.name)?.digest, counter }]);
    return result;
  }
}
