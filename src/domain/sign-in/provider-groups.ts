/**
 * Where the groups a provider names for a person go at each sign-in. The groups feature implements it
 * (`GroupsService.setProviderGroups`); until it is wired, no provider is bound and the names are not kept.
 */
export interface ProviderGroupsSink {
  setProviderGroups(userId: string, names: readonly string[]): Promise<void>;
}

export const PROVIDER_GROUPS = Symbol('PROVIDER_GROUPS');
