// Game sessions: the lobby, and a preview of one session's map.
import {api} from './api.js';
import {drawMap, layers} from './mapview.js';
import {bytes, h, plural, replace} from './dom.js';

function when(text) {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleString();
}

export async function showLobby(main) {
  const {sessions} = await api('/v1/sessions');
  replace(main, h('section', {class: 'lobby'},
    h('h1', {}, 'Game sessions'),
    sessions.length === 0
      ? h('div', {class: 'card notice'}, h('h2', {}, 'No sessions yet'),
        h('p', {}, 'A host starts one from a tablet app or with ', h('code', {}, 'hoard session create'), '.'))
      : h('div', {class: 'sessions'}, sessions.map((session) => h('a', {class: 'card session', href: `#/sessions/${session.id}`},
        h('h2', {class: 'session-name'}, session.name),
        h('p', {class: 'muted'}, 'hosted by ', h('strong', {}, session.host), ` · ${when(session.createdAt)}`),
        h('p', {}, h('span', {class: `badge ${session.visibility}`}, session.visibility), ' ',
          `${plural(session.participants.length, 'player')} joined, ${session.connected} connected`),
        session.participants.length ? h('ul', {class: 'people'}, session.participants.slice(0, 12).map((name) => h('li', {}, name))) : null)))));
}

export async function showSession(main, id) {
  const session = await api(`/v1/sessions/${encodeURIComponent(id)}`);
  const world = layers(session.map);
  const canvas = h('canvas', {class: 'map', id: 'map-canvas', role: 'img', 'aria-label': `Map of ${session.name}`});
  const status = h('p', {class: 'muted', id: 'map-status'}, 'Drawing the map…');
  const smallest = (session.manifest.assets ?? []).reduce((sum, asset) => sum + (asset.variants[0]?.size ?? 0), 0);
  const names = new Map((session.manifest.assets ?? []).map((asset) => [asset.digest, asset.name]));
  const frame = h('div', {class: 'map-frame'}, canvas);
  replace(main, h('section', {class: 'session-view'},
    h('nav', {class: 'crumbs'}, h('a', {href: '#/sessions'}, 'Sessions'), ' › ', h('span', {}, session.name)),
    h('div', {class: 'session-head'},
      h('h1', {class: 'session-name'}, session.name),
      h('p', {class: 'muted'}, 'hosted by ', h('strong', {}, session.host), ` · ${session.visibility} · change ${session.seq}`),
      h('a', {class: 'button primary', id: 'open-table', href: `/table/${encodeURIComponent(session.id)}`}, 'Open the live table')),
    h('div', {class: 'session-body'},
      h('div', {class: 'map-column'}, frame, status),
      h('aside', {class: 'card legend'},
        h('h3', {}, 'Map'),
        h('p', {}, `${world.width} × ${world.height} tiles · ${plural(world.objects.length, 'object')} · ${plural(world.walls.length, 'wall')}`),
        h('p', {class: 'muted'}, `${plural(session.manifest.assets.length, 'asset')}; smallest variants ${bytes(smallest)}`),
        h('h3', {}, 'Tokens'),
        world.tokens.length ? h('ol', {class: 'tokens'}, world.tokens.map((token) => h('li', {},
          h('span', {class: 'number'}, Number.isInteger(token?.number) ? String(token.number) : '–'),
          h('span', {}, typeof token?.label === 'string' ? token.label : names.get(token?.asset) ?? 'token'),
          // What the table knows of it: hidden from players, whose it is, its status markers.
          h('span', {class: 'muted'}, [
            token?.hidden === true ? 'hidden' : '',
            typeof token?.owner === 'string' ? `${session.participants.find((p) => p.id === token.owner)?.name ?? 'a player'}'s` : '',
            ...(Array.isArray(token?.markers) ? token.markers.filter((m) => typeof m === 'string') : []),
          ].filter(Boolean).join(' · ')))))
          : h('p', {class: 'muted'}, 'No tokens on the map.'),
        h('h3', {}, 'Players'),
        session.participants.length ? h('ul', {class: 'people'}, session.participants.map((person) =>
          h('li', {class: person.connected === 'yes' ? 'online' : ''}, person.name))) : h('p', {class: 'muted'}, 'Nobody has joined yet.')))));
  // The whole map on screen: as wide as its frame, no taller than the window below the header.
  const result = await drawMap(canvas, session.map, session.manifest, Math.max(200, (frame.clientWidth || 660) - 20),
    Math.max(240, window.innerHeight - 140));
  status.textContent = `Drawn from ${plural(result.references, 'picture')}, smallest variants first.`;
}
