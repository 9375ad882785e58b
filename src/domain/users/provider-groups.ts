/**
 * Where the groups a provider names for a person go at each sign-in: `GroupsService.setProviderGroups` (bound in
 * UsersModule), which makes them exactly that person's provider groups.
 */
export interface ProviderGroupsSink {
  setProviderGroups(userId: string, names: readonly string[]): Promise<void>;
}

export const PROVIDER_GROUPS = Symbol('PROVIDER_GROUPS');
