import {
  logOut,
  offerGrantsPanel,
  offerProviderSignIn,
  resumeSession,
  signedInBySession,
  signInProblem,
  wireGrantsPanel,
  wireKeysPanel,
} from './account.js';
import { api, ApiFailure, storedKey, storeKey, streamTurn, type TurnEvent } from './api.js';
import { renderCard, renderPendingCard, type ToolCard } from './cards.js';
import { attachSuggestions, type Suggestion } from './composer.js';
import { byId, h, when } from './dom.js';
import { markdownAnswer, renderMarkdown } from './markdown.js';
import { skillEvalsSection } from './skill-evals.js';
import { offerUsageDashboard, wireUsageDashboard } from './usage-dashboard.js';

interface Chat {
  id: string;
  title: string | null;
  createdAt: string;
}

interface Activation {
  name: string;
  how: string;
  firstActivatedAt: string;
  lastActivatedAt: string;
  count: number;
  version: string | null;
}

interface Message {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  toolCards: ToolCard[] | null;
  createdAt: string;
}

interface Page<T> {
  items: T[];
  total: number;
}

const state = {
  chatId: null as string | null,
  suggestions: [] as Suggestion[],
  /** The prefixes this server reads as a skill invocation (`[app.skills] explicit_prefixes`). */
  prefixes: ['/'] as string[],
  sending: false,
  /** The chat of the address being opened: a message sent meanwhile waits for it and goes there. */
  opening: null as Promise<void> | null,
  /** Pages of the chat list shown (200 chats a page). */
  chatPages: 1,
  /** The server has no model: chats answer 503 until one is configured, so nothing is sent. */
  noModel: false,
  /** The signed-in user's role: admins and editors may see a skill's trigger evals. */
  role: undefined as string | undefined,
};

/** An error as the API answers it (`code`, `message`), or what the page says of one. */
interface Problem {
  code?: string;
  message: string;
  /** Why, in the words of what failed (a model provider's): the server tells admins only. */
  reason?: string;
}

/** On a narrow screen, the panel shown: the conversation, the chat list or the skills. */
type View = 'chats' | 'conversation' | 'skills';

const UNTITLED = 'New chat';

const REFUSED = 'That key was refused; try another.';
/** The most recent messages a chat shows; older ones are counted, not shown. */
const SHOWN_MESSAGES = 200;

const CHAT_IN_URL = 'chat';

/** Wires the page once, then enters (or asks for a key). */
function start(): void {
  byId('sign-in-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void signIn();
  });
  // The page needs a key: Escape does not leave a blank page behind the dialog.
  byId('sign-in').addEventListener('cancel', (event) => event.preventDefault());
  byId('sign-out').addEventListener('click', () => {
    logOut().then(
      () => location.replace(location.pathname),
      (error: unknown) => showProblem(problemOf(error)),
    );
  });
  wireKeysPanel((error) => showProblem(problemOf(error)));
  wireGrantsPanel();
  wireUsageDashboard();
  offerProviderSignIn().catch((error: unknown) => showProblem(problemOf(error)));
  byId('new-chat').addEventListener('click', guarded(newChat));
  byId('composer').addEventListener('submit', (event) => {
    event.preventDefault();
    void guarded(send)();
  });
  // First the suggestions: Enter on an open list takes a suggestion and goes no further.
  attachSuggestions(
    byId('composer-input'),
    byId('suggestions'),
    () => state.suggestions,
    () => state.prefixes,
  );
  byId('composer-input').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.defaultPrevented) {
      event.preventDefault();
      void guarded(send)();
    }
  });
  for (const button of document.querySelectorAll<HTMLButtonElement>('#views button'))
    button.addEventListener('click', () => showView(button.dataset.view as View));
  // The message box is on the conversation panel: skipping to it shows that panel first.
  byId('skip').addEventListener('click', () => showView('conversation'));
  let searching: number | undefined;
  byId<HTMLInputElement>('skill-search').addEventListener('input', () => {
    clearTimeout(searching);
    searching = window.setTimeout(guarded(searchSkills), 200);
  });
  void enter();
}

/** Who the key (or no key, with auth off) is; then the page. A refused key asks for another. */
async function enter(): Promise<void> {
  const stored = storedKey();
  if (stored !== null && !isKeyShaped(stored)) {
    storeKey(null);
    return askForKey('');
  }
  let me: { name: string; authMode: string; role?: string };
  try {
    // Without a key, the sign-in cookie's session (if any) is who the page is.
    if (stored === null) await resumeSession();
    me = await api<{ name: string; authMode: string; role?: string }>('GET', '/v1/me');
  } catch (error) {
    if (isRefused(error)) return askForKey(storedKey() === null ? '' : REFUSED);
    return showProblem(problemOf(error));
  }
  byId<HTMLDialogElement>('sign-in').close();
  byId('who').textContent = me.authMode === 'none' ? `${me.name} (auth off)` : `Signed in as ${me.name}`;
  byId('sign-out').hidden = storedKey() === null && !signedInBySession();
  byId('open-keys').hidden = me.authMode === 'none' && !signedInBySession();
  offerUsageDashboard(me.role);
  state.role = me.role;
  // Grants are given by a person who signed in; with auth off nobody did.
  if (me.authMode !== 'none' || signedInBySession())
    offerGrantsPanel().catch((error: unknown) => showProblem(problemOf(error)));
  byId('app').hidden = false;
  byId('views').hidden = false;
  // Each part on its own: one that fails (skills switched off on the server) says so and the rest works.
  await Promise.all([guarded(loadModels)(), guarded(loadSuggestions)(), guarded(loadChats)(), guarded(searchSkills)()]);
  const wanted = new URLSearchParams(location.search).get(CHAT_IN_URL);
  if (wanted !== null) {
    state.opening = guarded(() => openChat(wanted))();
    await state.opening;
    state.opening = null;
  }
}

function askForKey(problem: string): void {
  byId('sign-in-error').textContent = problem === '' ? signInProblem() : problem;
  const dialog = byId<HTMLDialogElement>('sign-in');
  if (!dialog.open) dialog.showModal();
  byId<HTMLInputElement>('api-key').focus();
}

async function signIn(): Promise<void> {
  const key = byId<HTMLInputElement>('api-key').value.trim();
  if (!isKeyShaped(key))
    return askForKey('An API key is letters, digits and punctuation, without spaces; paste it again.');
  storeKey(key);
  try {
    await api('GET', '/v1/me');
  } catch (error) {
    storeKey(null);
    return askForKey(isRefused(error) ? REFUSED : textOf(problemOf(error)));
  }
  await enter();
}

/**
 * An action of the page with its failures shown: a refused key (revoked meanwhile) asks for
 * another, anything else is said in the status line. Nothing fails silently.
 */
function guarded(action: () => Promise<void>): () => Promise<void> {
  return async () => {
    try {
      await action();
    } catch (error) {
      if (isRefused(error)) {
        storeKey(null);
        askForKey('Your key was refused (revoked or expired?); sign in again.');
      } else showProblem(problemOf(error));
    }
  };
}

/** A key an HTTP header can carry (printable ASCII): anything else never reaches the server. */
function isKeyShaped(key: string): boolean {
  return /^[\x21-\x7e]+$/.test(key);
}

function isRefused(error: unknown): boolean {
  return error instanceof ApiFailure && error.error.status === 401;
}

async function loadModels(): Promise<void> {
  const { models, defaultModel } = await api<{
    models: { name: string; tools: boolean }[];
    defaultModel: string | null;
  }>('GET', '/v1/models');
  const select = byId<HTMLSelectElement>('model');
  select.replaceChildren(
    ...models.map((model) =>
      h('option', {
        value: model.name,
        selected: model.name === defaultModel,
        text: model.tools ? model.name : `${model.name} (no tools)`,
      }),
    ),
  );
  select.disabled = models.length === 0;
  // No model: said before anyone types, and Send is off (the server would answer 503).
  state.noModel = models.length === 0;
  byId('no-model').hidden = !state.noModel;
  byId<HTMLButtonElement>('send').disabled = state.noModel || state.sending;
  if (state.noModel) byId('composer-input').setAttribute('aria-describedby', 'no-model');
  else byId('composer-input').removeAttribute('aria-describedby');
}

async function loadSuggestions(): Promise<void> {
  const [skills, commands] = await Promise.all([
    api<{ explicitPrefixes: string[]; skills: { name: string; description: string }[] }>('GET', '/v1/skills'),
    api<{ commands: { name: string; description: string | null }[] }>('GET', '/v1/commands').catch(() => ({
      commands: [],
    })),
  ]);
  state.prefixes = skills.explicitPrefixes;
  state.suggestions = [
    ...commands.commands.map((command) => ({
      name: command.name,
      description: command.description ?? '',
      kind: 'command' as const,
    })),
    ...skills.skills.map((skill) => ({ name: skill.name, description: skill.description, kind: 'skill' as const })),
  ].sort((a, b) => a.name.localeCompare(b.name));
}

/** The newest chats, 200 a page, as many pages as asked for; "More chats" asks for another. */
async function loadChats(): Promise<void> {
  const chats: Chat[] = [];
  let total = 0;
  for (let pageIndex = 0; pageIndex < state.chatPages; pageIndex++) {
    const page = await api<Page<Chat>>('GET', `/v1/chats?limit=200&offset=${pageIndex * 200}`);
    chats.push(...page.items);
    total = page.total;
    if (chats.length >= total) break;
  }
  const items = chats.map((chat) => {
    const title = titleOf(chat);
    if (chat.id === state.chatId) showTitle(title);
    const openButton = h('button', {
      type: 'button',
      class: 'chat-open',
      'aria-current': chat.id === state.chatId ? 'page' : undefined,
      title: `${title} · ${when(chat.createdAt)}`,
      text: title,
    });
    openButton.addEventListener(
      'click',
      guarded(() => openChat(chat.id)),
    );
    const remove = h('button', {
      type: 'button',
      class: 'chat-delete',
      'aria-label': `Delete ${chat.title === null ? 'this chat' : title}`,
      text: '×',
    });
    remove.addEventListener(
      'click',
      guarded(() => deleteChat(chat.id)),
    );
    return h('li', {}, openButton, remove);
  });
  if (total > chats.length) {
    const more = h('button', {
      type: 'button',
      class: 'chat-more',
      text: `More chats (${total - chats.length} older)`,
    });
    more.addEventListener(
      'click',
      guarded(async () => {
        state.chatPages++;
        await loadChats();
      }),
    );
    items.push(h('li', {}, more));
  }
  byId('chat-list').replaceChildren(...items);
}

async function newChat(): Promise<void> {
  const chat = await api<Chat>('POST', '/v1/chats', {});
  // A message sent while the chat opens goes to it, not to another new one.
  state.chatId = chat.id;
  await openChat(chat.id);
  showView('conversation');
  byId('composer-input').focus();
}

async function deleteChat(id: string): Promise<void> {
  if (!confirm('Delete this chat, its messages and its activated skills?')) return;
  await api('DELETE', `/v1/chats/${encodeURIComponent(id)}`);
  if (state.chatId === id) {
    state.chatId = null;
    showTitle(UNTITLED);
    byId('messages').replaceChildren();
    byId('activated').replaceChildren();
    history.replaceState(null, '', location.pathname);
  }
  await loadChats();
}

async function openChat(id: string): Promise<void> {
  try {
    const path = `/v1/chats/${encodeURIComponent(id)}`;
    const [chat, first] = await Promise.all([
      api<Chat & { activatedSkills: Activation[] }>('GET', path),
      api<Page<Message>>('GET', `${path}/messages?limit=${SHOWN_MESSAGES}`),
    ]);
    // The newest messages: the last page when the chat has more than a page.
    const older = Math.max(0, first.total - SHOWN_MESSAGES);
    const messages =
      older === 0 ? first : await api<Page<Message>>('GET', `${path}/messages?limit=${SHOWN_MESSAGES}&offset=${older}`);
    state.chatId = chat.id;
    history.replaceState(null, '', `?${CHAT_IN_URL}=${encodeURIComponent(chat.id)}`);
    showTitle(titleOf(chat));
    showView('conversation');
    const note = older === 0 ? [] : [h('li', { class: 'older', text: `${older} older message(s) not shown.` })];
    byId('messages').replaceChildren(...note, ...messages.items.map(renderMessage));
    renderActivated(chat.activatedSkills);
    await loadChats();
    scrollToEnd();
  } catch (error) {
    if (isRefused(error)) throw error;
    showProblem(problemOf(error), 'This chat cannot be opened: ');
  }
}

/** A message: the user's as they typed it (plain text), the assistant's rendered from Markdown. */
function renderMessage(message: Message): HTMLElement {
  const cards = (message.toolCards ?? []).map(renderCard);
  const content =
    message.role === 'user'
      ? h('div', { class: 'content', text: message.content })
      : h('div', { class: 'content markdown' }, renderMarkdown(message.content));
  return h(
    'li',
    { class: `message message-${message.role}` },
    h('p', { class: 'role', text: message.role === 'user' ? 'You' : 'Assistant' }),
    cards.length > 0 ? h('div', { class: 'cards' }, ...cards) : null,
    content,
  );
}

function renderActivated(activations: Activation[]): void {
  byId('activated').replaceChildren(
    ...(activations.length === 0
      ? [h('li', { class: 'empty', text: 'None yet.' })]
      : activations.map((activation) =>
          h(
            'li',
            { class: 'activation' },
            h('strong', { text: activation.name }),
            h('span', { text: ` ${activation.how}, ${activation.count}×` }),
            h('br'),
            h('small', {
              text: `last ${when(activation.lastActivatedAt)}${
                activation.version === null ? '' : ` · ${activation.version.slice(0, 19)}`
              }`,
            }),
          ),
        )),
  );
}

/**
 * Sends the message and shows the turn as it streams. A turn that fails stores nothing on the
 * server, so it is taken off the page and the text goes back into the box, to be sent again.
 */
async function send(): Promise<void> {
  const input = byId<HTMLTextAreaElement>('composer-input');
  const content = input.value.trim();
  if (content === '' || state.sending) return;
  if (state.noModel) return showProblem(NO_MODEL, 'Not sent: ', ' Your message stays in the box.');
  state.sending = true;
  byId<HTMLButtonElement>('send').disabled = true;
  const asked = renderMessage({
    id: 'pending-user',
    role: 'user',
    content,
    toolCards: null,
    createdAt: new Date().toISOString(),
  });
  const answer = answeringMessage();
  let failure: Problem | undefined;
  let refused: unknown;
  try {
    if (state.opening !== null) await state.opening;
    if (state.chatId === null) await newChat();
    const chatId = state.chatId!;
    input.value = '';
    byId('messages').append(asked, answer.element);
    showStatus('The assistant is answering…');
    scrollToEnd();
    const model = byId<HTMLSelectElement>('model').value;
    await streamTurn(chatId, { content, ...(model === '' ? {} : { model }) }, (event) => {
      if (event.event === 'error') failure = streamedProblem(event.data);
      else if (event.event === 'done' && state.chatId === chatId)
        renderActivated((event.data as { activatedSkills: Activation[] }).activatedSkills);
      answer.hear(event);
    });
    if (failure === undefined) {
      answer.finish();
      showStatus('The assistant answered.');
      await loadChats();
    }
  } catch (error) {
    failure = problemOf(error);
    if (isRefused(error)) refused = error;
  } finally {
    state.sending = false;
    byId<HTMLButtonElement>('send').disabled = state.noModel;
  }
  if (failure !== undefined) {
    asked.remove();
    answer.element.remove();
    // Typed meanwhile: kept after the failed message, so neither is lost.
    input.value = input.value.trim() === '' ? content : `${content}\n${input.value}`;
    showProblem(failure, 'Not sent: ', ' Your message is back in the box.');
  }
  if (refused !== undefined) throw refused;
}

/**
 * The assistant's message while its turn streams: tool cards as the calls start and end, the
 * answer rendered from Markdown as it grows, and at the end the answer as stored.
 */
function answeringMessage(): { element: HTMLElement; hear(event: TurnEvent): void; finish(): void } {
  const cards = h('div', { class: 'cards' });
  const answer = markdownAnswer(scrollToEnd);
  const element = h(
    'li',
    { class: 'message message-assistant', 'aria-busy': 'true' },
    h('p', { class: 'role', text: 'Assistant' }),
    cards,
    answer.element,
  );
  let stored: string | undefined;
  const hear = ({ event, data }: TurnEvent) => {
    if (event === 'tool-call')
      cards.append(renderPendingCard(data as { id: string; tool: string; args: Record<string, unknown> }));
    else if (event === 'tool-result') {
      const card = data as ToolCard;
      const pending = cards.querySelector(`[data-call="${CSS.escape(card.id)}"]`);
      if (pending === null) cards.append(renderCard(card));
      else pending.replaceWith(renderCard(card));
    } else if (event === 'text-delta') answer.append((data as { text: string }).text);
    else if (event === 'done') stored = (data as { assistantMessage: { content: string } }).assistantMessage.content;
    scrollToEnd();
  };
  const finish = () => {
    answer.finish(stored);
    element.removeAttribute('aria-busy');
  };
  return { element, hear, finish };
}

async function searchSkills(): Promise<void> {
  const query = byId<HTMLInputElement>('skill-search').value.trim();
  const skills =
    query === ''
      ? (await api<{ skills: { name: string; description: string }[] }>('GET', '/v1/skills')).skills
      : (
          await api<{ results: { name: string; description: string }[] }>(
            'GET',
            `/v1/skills/search?q=${encodeURIComponent(query)}&limit=20`,
          )
        ).results;
  byId('skill-results').replaceChildren(
    ...skills.map((skill) => {
      const button = h(
        'button',
        { type: 'button', class: 'skill-open' },
        h('strong', { text: skill.name }),
        h('span', { text: ` ${skill.description}` }),
      );
      button.addEventListener(
        'click',
        guarded(() => showSkill(skill.name)),
      );
      return h('li', {}, button);
    }),
  );
}

async function showSkill(name: string): Promise<void> {
  const path = `/v1/skills/${encodeURIComponent(name)}`;
  const [detail, body] = await Promise.all([
    api<{ name: string; description: string; resources: { files: { path: string; size: number }[] } }>('GET', path),
    api<{ body: string }>('GET', `${path}/body?preview=true`),
  ]);
  const evals = h('div', { class: 'skill-evals' });
  byId('skill-detail').replaceChildren(
    h('h3', { id: 'skill-name', text: detail.name }),
    h('p', { text: detail.description }),
    h('h4', { text: 'Files' }),
    h(
      'ul',
      { class: 'files' },
      ...detail.resources.files.map((file) => h('li', { text: `${file.path} (${file.size} bytes)` })),
    ),
    h(
      'details',
      {},
      h('summary', { text: 'Instructions (SKILL.md)' }),
      h('pre', { class: 'output', tabindex: '0', 'aria-label': `Instructions of ${detail.name}`, text: body.body }),
    ),
    evals,
  );
  // A dialog: in view wherever the skill was listed, on a phone too; Escape or Close returns to the list.
  const dialog = byId<HTMLDialogElement>('skill-dialog');
  if (!dialog.open) dialog.showModal();
  // Its trigger evals come after, for those who may see them (a skill opened meanwhile leaves this one detached).
  const section = await skillEvalsSection(detail.name, state.role, () => byId<HTMLSelectElement>('model').value).catch(
    (error: unknown) => h('p', { class: 'error', role: 'alert', text: `Trigger evals: ${textOf(problemOf(error))}` }),
  );
  if (section !== null) evals.replaceChildren(section);
}

function showView(view: View): void {
  byId('app').dataset.view = view;
  for (const button of document.querySelectorAll<HTMLButtonElement>('#views button'))
    button.setAttribute('aria-pressed', String(button.dataset.view === view));
}

function titleOf(chat: Chat): string {
  return chat.title === null || chat.title.trim() === '' ? UNTITLED : chat.title;
}

function showTitle(title: string): void {
  byId('chat-title').textContent = title;
  document.title = `${title} · Skillhost`;
}

function showStatus(message: string): void {
  const status = byId('status');
  status.className = 'status';
  status.textContent = message;
}

/** An error, shown so it is seen: its code and its message, in the status box above the message box. */
function showProblem(problem: Problem, before = '', after = ''): void {
  const status = byId('status');
  status.className = 'status status-error';
  const reason = problem.reason === undefined ? [] : [` Reason: ${problem.reason}`];
  status.replaceChildren(
    before,
    ...(problem.code === undefined ? [] : [h('strong', { text: problem.code }), ': ']),
    problem.message,
    ...reason,
    after,
  );
}

/**
 * A streamed turn's `error` event: `{code, message, details?}`, `details.reason` when the server gave one (to admins).
 */
function streamedProblem(data: unknown): Problem {
  const { code, message, details } = data as { code?: string; message: string; details?: { reason?: unknown } };
  return { code, message, ...(typeof details?.reason === 'string' ? { reason: details.reason } : {}) };
}

function scrollToEnd(): void {
  const messages = byId('messages');
  messages.scrollTop = messages.scrollHeight;
}

function problemOf(error: unknown): Problem {
  return error instanceof ApiFailure
    ? { code: error.error.code, message: error.error.message }
    : { message: String(error) };
}

function textOf(problem: Problem): string {
  return problem.code === undefined ? problem.message : `${problem.code}: ${problem.message}`;
}

/** What sending says while the server has no model (it would answer 503 with this code). */
const NO_MODEL: Problem = {
  code: 'MODEL_NOT_CONFIGURED',
  message: 'No model is configured on this server; the note above the messages says how to configure one.',
};

start();
