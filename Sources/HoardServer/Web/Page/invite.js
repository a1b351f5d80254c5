// Invitations players can open on their own devices: the join code, a link built from an address they can reach and
// that link's QR code. A page opened on loopback (127.0.0.1, localhost) builds the link from the server's first LAN
// URL (GET /v1/server, listed by `hoard serve --lan`); loopback is never offered to others.
import {h, replace} from './dom.js';
import {drawQR} from './qr.js';

let asked = null;
/** What GET /v1/server answers (asked once per page); null when it cannot be had. */
export function serverInfo() {
  asked ??= fetch('/v1/server', {credentials: 'omit'}).then((response) => (response.ok ? response.json() : null)).catch(() => null);
  return asked;
}

/** Whether a host name only reaches this machine. */
export function isLoopback(host) {
  return host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '[::1]' || host === '::1';
}

/** The origin to build players' links from: this page's own unless it is loopback, else the server's first LAN URL;
 * null when the server offers none. */
export function playersOrigin(info, here = location) {
  if (!isLoopback(here.hostname)) return here.origin;
  return info?.urls?.[0] ?? null;
}

/**
 * A card with the join code (unless the page shows it already: `showsCode: false`), the players' link to `/join/CODE`
 * (id `join-link`) and its QR code (canvas `#invite-qr`), filled in once the server has said where it can be reached.
 */
export function inviteCard(code, {showsCode = true} = {}) {
  const body = h('div', {class: 'invite-body'}, h('p', {class: 'muted'}, 'Finding the address players can reach…'));
  const card = h('section', {class: 'invite-card', id: 'invite', 'aria-labelledby': 'invite-heading'},
    h('h3', {id: 'invite-heading'}, 'Invite players'),
    showsCode ? h('p', {}, 'Join code: ', h('strong', {class: 'join-code', id: 'invite-code'}, code)) : null, body);
  serverInfo().then((info) => {
    const origin = playersOrigin(info);
    const path = `/join/${encodeURIComponent(code)}`;
    if (!origin) {
      const local = new URL(path, location.origin).href;
      replace(body, h('p', {}, h('a', {id: 'join-link', href: local}, local)),
        h('p', {class: 'notice', id: 'invite-local'}, 'This address works on this machine only. To invite players on other devices, ',
          'serve the local network (', h('code', {}, 'hoard serve --lan'), ') and open this page again.'));
      return;
    }
    const link = new URL(path, origin).href;
    const canvas = drawQR(h('canvas', {id: 'invite-qr', class: 'invite-qr', role: 'img', 'aria-label': `QR code of ${link}`}), link, 6);
    replace(body, h('p', {}, h('a', {id: 'join-link', href: link}, link)), canvas,
      h('p', {class: 'muted'}, 'Players on the same network scan the code or open the link, then type their name.'),
      info?.urls?.length > 1 && isLoopback(location.hostname)
        ? h('p', {class: 'muted', id: 'invite-other'}, 'Other addresses of this server: ', info.urls.slice(1).join(', ')) : null);
  });
  return card;
}
