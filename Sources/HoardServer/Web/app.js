// The page's entry point: sign-in, the header's tabs and a small router over location.hash.
import {api, auth, APIError} from './api.js';
import {h, replace} from './dom.js';
import {showBrowse} from './browse.js';
import {showAsset} from './asset.js';
import {showUpload} from './upload.js';
import {showLobby, showSession} from './sessions.js';

const main = document.getElementById('main');

const routes = [
  [/^#\/asset\/(sha256:[0-9a-f]{64})$/, (m) => showAsset(main, m[1]), 'browse'],
  [/^#\/upload$/, () => showUpload(main), 'upload'],
  [/^#\/sessions$/, () => showLobby(main), 'sessions'],
  [/^#\/sessions\/([0-9a-z-]{1,64})$/, (m) => showSession(main, m[1]), 'sessions'],
  [/^#?\/?(\?.*)?$/, (m) => showBrowse(main, new URLSearchParams(m[1] ?? '')), 'browse'],
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
          : `Cannot reach the server: ${failure.message}`;
    } finally {
      button.disabled = false;
    }
  });
  replace(main, h('div', {class: 'center'}, form));
  input.focus();
}

function render() {
  const signedIn = Boolean(auth.token);
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('who').hidden = !signedIn;
  if (!signedIn) return signInForm();
  const hash = location.hash || '#/';
  for (const [pattern, show, tab] of routes) {
    const match = hash.match(pattern);
    if (!match) continue;
    for (const link of document.querySelectorAll('#nav a')) link.classList.toggle('active', link.dataset.tab === tab);
    show(match).catch((error) => {
      replace(main, h('div', {class: 'card notice error'}, h('h2', {}, 'Something went wrong'), h('p', {}, error.message)));
    });
    return;
  }
  replace(main, h('div', {class: 'card notice'}, h('h2', {}, 'Nothing here'), h('p', {}, h('a', {href: '#/'}, 'Back to the packs'))));
}

document.getElementById('sign-out').addEventListener('click', () => {
  auth.signOut();
  location.hash = '#/';
  render();
});
window.addEventListener('hoard:signed-out', () => signInForm('Your token is no longer accepted; sign in again.'));
window.addEventListener('hashchange', render);
render();
