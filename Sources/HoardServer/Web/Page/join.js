// The table page's entry point. `/join` and `/join/ABCD-EFGH`: a player gives a display name and joins by the code;
// the participant token it gets is kept in this tab's sessionStorage only (a reload keeps the seat, closing the tab
// forgets it). `/table/{id}`: a member (the host) opens a session's table with the token the main page signed in with.
import {api, APIError, auth} from './api.js';
import {h, replace} from './dom.js';
import {openTable} from './table.js';
import {editorTools} from './editor.js';
import {hostControls} from './host.js';

const SEAT_KEY = 'hoard.seat';
// The player key a join answers: sent at every later join from this browser, so the player's dice statistics continue
// across the group's sessions (the key is the record's; a name claims nothing).
const PLAYER_KEY = 'hoard.player';
const main = document.getElementById('main');
const normalised = (code) => (code ?? '').toUpperCase().replace(/[^0-9A-Z]/g, '');

const seat = {
  get() { try { return JSON.parse(sessionStorage.getItem(SEAT_KEY)); } catch { return null; } },
  keep(value) { sessionStorage.setItem(SEAT_KEY, JSON.stringify(value)); },
  forget() { sessionStorage.removeItem(SEAT_KEY); },
};

function problem(title, message, link) {
  replace(main, h('div', {class: 'center'}, h('div', {class: 'card notice error'}, h('h2', {}, title), h('p', {}, message), link)));
}

async function sit(kept) {
  const request = (path, options = {}) => api(path, {...options, token: kept.token});
  try {
    const table = await openTable(main, {
      sessionId: kept.sessionId, token: kept.token, seat: {participantId: kept.participantId, isHost: false}, request,
      onLeave: () => { seat.forget(); location.assign('/join'); },
    });
    window.hoardTable = table;
  } catch (error) {
    if (error instanceof APIError && (error.status === 401 || error.status === 404)) {
      seat.forget();
      return joinForm(kept.code, 'That game has ended, or your seat is no longer known. Join again with the code.');
    }
    throw error;
  }
}

/** The player key this browser keeps, as a join request's field (none: the server makes one). */
function playerKey() {
  const key = localStorage.getItem(PLAYER_KEY);
  return /^hoard_k_[A-Za-z0-9]{43}$/.test(key ?? '') ? {playerKey: key} : {};
}

function joinForm(code, message) {
  const codeInput = h('input', {id: 'join-code', type: 'text', required: true, value: code ?? '', placeholder: 'ABCD-EFGH',
    autocomplete: 'off', autocapitalize: 'characters', spellcheck: 'false', maxlength: '16'});
  const nameInput = h('input', {id: 'join-name', type: 'text', required: true, maxlength: '64', placeholder: 'Your name at the table', autocomplete: 'nickname'});
  const error = h('p', {class: 'error', role: 'alert'}, message ?? '');
  const button = h('button', {type: 'submit', class: 'primary'}, 'Join the game');
  const form = h('form', {class: 'card sign-in', id: 'join-form'},
    h('h1', {}, 'Join a game'),
    h('p', {class: 'muted'}, 'Type the code your host gave you and the name the others will see. No account needed; ',
      'your seat is kept in this tab only, and this browser keeps your dice record for the group\u2019s next games.'),
    h('label', {for: 'join-code'}, 'Code'), codeInput,
    h('label', {for: 'join-name'}, 'Your name'), nameInput, error, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = '';
    try {
      const response = await fetch('/v1/sessions/join', {method: 'POST', credentials: 'omit', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({code: codeInput.value.trim(), name: nameInput.value.trim(), ...playerKey()})});
      const body = await response.json().catch(() => null);
      if (!response.ok) throw new APIError(response.status, body);
      if (body.playerKey) localStorage.setItem(PLAYER_KEY, body.playerKey);
      const kept = {code: normalised(codeInput.value), sessionId: body.sessionId, participantId: body.participantId,
        token: body.participantToken, name: nameInput.value.trim()};
      seat.keep(kept);
      history.replaceState(null, '', `/join/${kept.code.slice(0, 4)}-${kept.code.slice(4)}`);
      await sit(kept);
    } catch (failure) {
      error.textContent = failure instanceof APIError && failure.code === 'UNKNOWN_CODE'
        ? 'No game has that code. Check it with your host.'
        : failure instanceof APIError ? failure.message : `Cannot reach the server: ${failure.message}`;
    } finally {
      button.disabled = false;
    }
  });
  replace(main, h('div', {class: 'center'}, form));
  (code ? nameInput : codeInput).focus();
}

async function hostTable(sessionId) {
  if (!auth.token) {
    return problem('Sign in first', 'The host opens the table with a member’s token.', h('a', {href: '/'}, 'Sign in on the main page'));
  }
  const token = auth.token;
  const request = (path, options = {}) => api(path, options);
  const table = await openTable(main, {sessionId, token, seat: {}, request, onLeave: () => location.assign(`/#/sessions/${sessionId}`)});
  window.hoardTable = table;
  if (table.isHost) {
    hostControls(main, table, request);
    editorTools(main, table, request);
  }
}

async function route() {
  const path = location.pathname;
  const host = path.match(/^\/table\/([0-9a-z-]{1,64})$/);
  if (host) return hostTable(host[1]);
  const given = path.match(/^\/join\/([^/]{1,32})$/);
  const code = given ? normalised(decodeURIComponent(given[1])) : '';
  const kept = seat.get();
  if (kept?.token && (!code || kept.code === code)) return sit(kept);
  joinForm(code ? `${code.slice(0, 4)}-${code.slice(4)}` : '');
}

window.addEventListener('hoard:signed-out', () => problem('Signed out', 'Your token is no longer accepted.', h('a', {href: '/'}, 'Sign in again')));
route().catch((error) => problem('Something went wrong', error.message));
