import type { NotificationBus } from './notification-bus.js';

/**
 * Tells every instance (this one too) that some users' views of the skills may have changed without the catalogue
 * changing (their groups did): each instance's listeners (MCP sessions' `list_changed`) look again for those users.
 * The payload is user ids separated by commas, split to stay well under PostgreSQL's 8000-byte NOTIFY limit.
 */
export const USER_VIEWS_CHANNEL = 'skillhost_user_views';
const IDS_PER_MESSAGE = 150;

export async function announceUserViews(bus: NotificationBus | undefined, userIds: readonly string[]): Promise<void> {
  if (bus === undefined) return;
  const unique = [...new Set(userIds)];
  for (let start = 0; start < unique.length; start += IDS_PER_MESSAGE)
    await bus.notify(USER_VIEWS_CHANNEL, unique.slice(start, start + IDS_PER_MESSAGE).join(','));
}

/** The user ids of one message (anything but ids is dropped). */
export function userViewsOf(payload: string): string[] {
  return payload.split(',').filter((id) => /^[0-9a-f-]{36}$/i.test(id));
}
