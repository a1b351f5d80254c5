// The page's entry point: sign-in, the header's tabs and a small router over location.hash.
import {api, auth, APIError, OfflineError} from './api.js';
import {h, replace} from './dom.js';
import {showBrowse} from './browse.js';
import {showAsset} from './asset.js';
import {showUpload} from './upload.js';
import {showLobby, showSession} from './sessions.js';
import {showInvite, showMembers} from './members.js';

const main = document.getElementById('main');

const routes = [
  [/^#\/asset\/(sha256:[0-9a-f]{64})$/, (m) => showAsset(main, m[1]), 'browse', 'asset'],
  [/^#\/upload$/, () => showUpload(main), 'upload', 'upload'],
  [/^#\/sessions$/, () => showLobby(main), 'sessions', 'lobby'],
  [/^#\/sessions\/([0-9a-z-]{1,64})$/, (m) => showSession(main, m[1]), 'sessions', 'session'],
  [/^#\/members$/, () => showMembers(main), 'members', 'members'],
  [/^#?\/?(\?.*)?$/, (m) => showBrowse(main, new URLSearchParams(m[1] ?? '')), 'browse', 'browse'],
];

function signInForm(message) {
  document.getElementById('nav').hidden = true;
  document.getElementById('who').hidden = true;
  const input = h('input', {id: 'token', type: 'password', autocomplete: 'current-password', required: true,
    placeholder: 'hoard_…', spellcheck: 'false', 'aria-describedby': 'token-help'});
  const error = h('p', {class: 'error', role: 'alert'}, message ?? '');
  const button = h('button', {type: 'submit', class: 'primary'}, 'Sign in');
  const form = h('form', {class: 'card sign-in', id: 'sign-in'},
    h('h1', {}, 'Sign in to Hoard'),
    h('p', {class: 'muted', id: 'token-help'},
      'Paste the token your group’s admin gave you (', h('code', {}, 'hoard token create'), '). ',
      'It stays in this tab only and is forgotten when you close it.'),
    h('label', {for: 'token'}, 'Token'), input, error, button);
  document.title = 'Sign in · Hoard';
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = input.value.trim();
    button.disabled = true;
    error.textContent = '';
    try {
      await api('/v1/sessions', {token});
      auth.signIn(token);
      input.value = '';
      render();
    } catch (failure) {
      error.textContent = failure instanceof APIError && failure.status === 401
        ? 'That token is not known here. Check it, or ask your admin for a new one.'
        : failure instanceof APIError && failure.status === 403
          ? 'That is a game participant’s token; sign in with a member’s token.'
          : failure instanceof OfflineError ? failure.message : `Cannot sign in: ${failure.message}`;
    } finally {
      button.disabled = false;
    }
  });
  replace(main, h('div', {class: 'center'}, form));
  input.focus();
}

/** What went wrong, in words that say what to do, with a way to try again. */
function failure(error) {
  const retry = h('button', {type: 'button', class: 'primary', id: 'retry'}, 'Try again');
  retry.addEventListener('click', () => render());
  const [title, advice] = error instanceof OfflineError ? ['The server cannot be reached', error.message]
    : error instanceof APIError && error.status === 404 && /^#\/sessions\//.test(location.hash)
      ? ['This session has ended', 'Its host ended it, or the link is wrong. Pick a running session from the list.']
      : error instanceof APIError && error.status === 404 ? ['Not found', `${error.message}. It may have been deleted; go back and pick another.`]
        : error instanceof APIError && error.status === 403 ? ['Not allowed', `${error.message}. Sign in with a member’s token of the right group.`]
          : ['Something went wrong', `${error.message}. Try again; if it keeps happening, tell your admin.`];
  const back = /^#\/sessions\//.test(location.hash) ? h('a', {class: 'button', href: '#/sessions'}, 'See the sessions')
    : h('a', {class: 'button', href: '#/'}, 'Back to the packs');
  return h('div', {class: 'card notice error', id: 'failure'}, h('h1', {}, title), h('p', {}, advice), h('p', {class: 'actions'}, retry, ' ', back));
}

/** After a change of view: the view's title in the tab, and focus on its heading (not on a filter change). */
let lastRoute = null;
function settle(route) {
  const heading = main.querySelector('h1');
  if (heading && route !== 'browse') document.title = `${heading.textContent} · Hoard`;
  if (route === lastRoute && route === 'browse') return;
  const isFirst = lastRoute === null;
  lastRoute = route;
  // Another view opens at its top (its title in sight), not where the last one was scrolled to.
  if (!isFirst) window.scrollTo(0, 0);
  if (!heading || isFirst) return;
  heading.tabIndex = -1;
  heading.focus({preventScroll: true});
}

function render() {
  const signedIn = Boolean(auth.token);
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('who').hidden = !signedIn;
  const hash = location.hash || '#/';
  // An invitation link works signed out: redeeming it signs this tab in.
  const invite = hash.match(/^#\/invite\/(hoard_i_[A-Za-z0-9]{1,80})$/);
  if (invite) {
    document.getElementById('nav').hidden = true;
    document.getElementById('who').hidden = true;
    document.title = 'You are invited · Hoard';
    return showInvite(main, invite[1], render);
  }
  if (!signedIn) return signInForm();
  for (const [pattern, show, tab, route] of routes) {
    const match = hash.match(pattern);
    if (!match) continue;
    for (const link of document.querySelectorAll('#nav a')) {
      link.classList.toggle('active', link.dataset.tab === tab);
      if (link.dataset.tab === tab) link.setAttribute('aria-current', 'page'); else link.removeAttribute('aria-current');
    }
    show(match).then(() => settle(route), (error) => {
      if (error instanceof APIError && error.status === 401) return;
      replace(main, failure(error));
      settle(`failure:${hash}`);
    });
    return;
  }
  replace(main, h('div', {class: 'card notice'}, h('h1', {}, 'Nothing here'),
    h('p', {}, 'This address is not one of the page’s. ', h('a', {href: '#/'}, 'Back to the packs'))));
  settle('missing');
}

// The skip link jumps past the header (and, when browsing, past the search and filters) to the view's content.
document.getElementById('skip').addEventListener('click', (event) => {
  event.preventDefault();
  const target = main.querySelector('[data-skip]') ?? main.querySelector('h1');
  if (!target) return;
  if (!target.hasAttribute('tabindex')) target.tabIndex = -1;
  target.focus();
});
history.scrollRestoration = 'manual';

document.getElementById('sign-out').addEventListener('click', () => {
  auth.signOut();
  location.hash = '#/';
  render();
});
window.addEventListener('hoard:signed-out', () => signInForm('Your token is no longer accepted; sign in again.'));
window.addEventListener('hashchange', render);
render();
