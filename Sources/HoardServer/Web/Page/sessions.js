// Game sessions: the lobby, and a preview of one session's map.
import {api, query} from './api.js';
import {assetCard} from './browse.js';
import {drawMap, layers} from './mapview.js';
import {bytes, h, plural, replace, toast} from './dom.js';
import {inviteCard} from './invite.js';
import {newMapCard, savedMapsCard} from './newmap.js';

function when(text) {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleString();
}

/** Start a session from one of the group's saved maps; once started, its join code and links. */
function startCard(maps, onStarted = () => {}) {
  if (!maps.length) {
    return h('div', {class: 'card start-session'}, h('h2', {}, 'Start a session'),
      h('p', {class: 'muted'}, 'Your group has no saved map yet. Make one above (New map, then “Save the table”) or import one with ',
        h('code', {}, 'hoard map import URL FILE.json'), ', then start a session from it here.'));
  }
  const map = h('select', {id: 'start-map'}, maps.map((m) => h('option', {value: m.name}, m.name)));
  const name = h('input', {type: 'text', id: 'start-name', maxlength: '128', required: true, autocomplete: 'off', value: maps[0].name});
  const visibility = h('select', {id: 'start-visibility'},
    h('option', {value: 'group'}, 'Your group can see it'), h('option', {value: 'private'}, 'Only you can see it'));
  const go = h('button', {type: 'submit', class: 'primary', id: 'start-button'}, 'Start the session');
  const out = h('div', {id: 'started', role: 'status'});
  map.addEventListener('change', () => { name.value = map.value; });
  const form = h('form', {class: 'card start-session', id: 'start-form'}, h('h2', {}, 'Start a session'),
    h('label', {for: 'start-map'}, 'Saved map'), map,
    h('label', {for: 'start-name'}, 'Session name'), name,
    h('label', {for: 'start-visibility'}, 'Who sees it in the lobby'), visibility,
    h('p', {class: 'actions start'}, go), out);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    go.disabled = true;
    try {
      const created = await api('/v1/sessions', {method: 'POST', json: {name: name.value.trim(), fromMap: map.value, visibility: visibility.value}});
      const page = new URL(`/#/sessions/${created.id}`, location.origin).href;
      const copy = h('button', {type: 'button', class: 'ghost small'}, 'Copy the code');
      copy.addEventListener('click', () => navigator.clipboard.writeText(created.code).then(() => toast('Code copied'), () => toast('Copying is not allowed here', 'error')));
      replace(out, h('div', {class: 'join-card'},
        h('p', {}, `“${created.name}” is running. Players join with this code:`),
        h('p', {class: 'join-code', id: 'join-code'}, created.code), copy,
        h('p', {class: 'muted'}, 'The code is shown once: note it now. Your group sees the session at ',
          h('a', {href: page, id: 'session-link'}, page), '.'),
        inviteCard(created.code, {showsCode: false})));
      onStarted(created);
    } catch (error) {
      replace(out, h('p', {class: 'error'}, error.status === 404 ? 'That saved map is gone; reload the page and pick another.'
        : `Cannot start it: ${error.message}`));
    } finally {
      go.disabled = false;
    }
  });
  return form;
}

/** The group's sessions as cards (or the notice that there are none), read afresh. */
async function sessionList() {
  const {sessions} = await api('/v1/sessions');
  return sessions.length === 0
    ? h('div', {class: 'card notice'}, h('h2', {}, 'No sessions yet'),
      h('p', {}, 'A host starts one from a tablet app or with ', h('code', {}, 'hoard session create'), '.'))
    : h('div', {class: 'sessions'}, sessions.map((session) => h('a', {class: 'card session', href: `#/sessions/${session.id}`},
      h('h2', {class: 'session-name'}, session.name),
      h('p', {class: 'muted'}, 'hosted by ', h('strong', {}, session.host), ` · ${when(session.createdAt)}`),
      h('p', {}, h('span', {class: `badge ${session.visibility}`}, session.visibility), ' ',
        `${plural(session.participants.length, 'player')} joined, ${session.connected} connected`),
      session.participants.length ? h('ul', {class: 'people'}, session.participants.slice(0, 12).map((name) => h('li', {}, name))) : null)));
}

export async function showLobby(main) {
  const [list, {maps}] = await Promise.all([sessionList(), api('/v1/maps').catch(() => ({maps: []}))]);
  const listed = h('div', {id: 'session-list'}, list);
  // A session just started is listed at once, not after a reload.
  const started = () => sessionList().then((fresh) => replace(listed, fresh)).catch(() => {});
  replace(main, h('section', {class: 'lobby'}, h('h1', {}, 'Game sessions'), newMapCard(), startCard(maps, started), savedMapsCard(maps), listed));
}

/**
 * Tokens to drag onto the map preview (the host's): a drop puts the asset on the tile under the pointer with the
 * next free number, and replaces the session's map (PUT), which every connected table receives.
 */
function tray(session, canvas, world) {
  const search = h('input', {type: 'search', id: 'tray-search', placeholder: 'Find a token', 'aria-label': 'Find a token to drag onto the map'});
  const tiles = h('div', {class: 'grid size-small tray-grid', id: 'tray'});
  let timer;
  const load = async () => {
    const page = await api('/v1/assets' + query({kind: 'token', q: search.value.trim(), limit: 24})).catch(() => ({assets: []}));
    replace(tiles, page.assets.map(assetCard));
  };
  search.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(load, 250); });
  load();
  canvas.addEventListener('dragover', (event) => {
    if (event.dataTransfer.types.includes('application/x-hoard-asset')) { event.preventDefault(); event.dataTransfer.dropEffect = 'copy'; }
  });
  canvas.addEventListener('drop', async (event) => {
    const data = event.dataTransfer.getData('application/x-hoard-asset');
    if (!data) return;
    event.preventDefault();
    const asset = JSON.parse(data);
    const box = canvas.getBoundingClientRect();
    const x = Math.max(0, Math.min(world.width - 1, Math.floor(((event.clientX - box.left) / box.width) * world.width)));
    const y = Math.max(0, Math.min(world.height - 1, Math.floor(((event.clientY - box.top) / box.height) * world.height)));
    const map = structuredClone(session.map);
    map.tokens = Array.isArray(map.tokens) ? map.tokens : [];
    const numbers = new Set(map.tokens.map((t) => t?.number));
    let number = 1;
    while (numbers.has(number)) number += 1;
    map.tokens.push({id: `web-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`, asset: asset.digest, x, y, number});
    try {
      await api(`/v1/sessions/${encodeURIComponent(session.id)}/map`, {method: 'PUT', json: map});
      toast(`${asset.name} ${number} is on the map at (${x}, ${y})`);
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    } catch (error) {
      toast(error.status === 403 ? 'Only the session’s host may change its map.' : `Cannot change the map: ${error.message}`, 'error');
    }
  });
  return h('div', {class: 'card tray-card'}, h('h2', {}, 'Drag a token onto the map'), search, tiles);
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
        session.you?.joinCode ? inviteCard(session.you.joinCode) : null,
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
  main.querySelector('.map-column').append(tray(session, canvas, world));
  // The whole map on screen: as wide as its frame, no taller than the window below the header.
  const result = await drawMap(canvas, session.map, session.manifest, Math.max(200, (frame.clientWidth || 660) - 20),
    Math.max(240, window.innerHeight - 140));
  status.textContent = `Drawn from ${plural(result.references, 'picture')}, smallest variants first.`;
}
