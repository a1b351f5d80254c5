// What the host does at the table besides what every player does: put a token from the group's packs on it, hide,
// reveal, assign or remove the selected token, save the table as a map, or replace the map with a saved one.
import {pictureURL, query, thumbnailDigest} from './api.js';
import {h, replace, toast} from './dom.js';
import {inviteCard} from './invite.js';
import {newId} from './tablestate.js';
import {hostName} from './table.js';

export function hostControls(main, table, request) {
  const {session, state} = table;
  const selected = h('p', {id: 'selected-token', class: 'muted'}, 'Click a token to select it.');
  const hide = h('button', {type: 'button', id: 'hide-token', disabled: true}, 'Hide');
  const reveal = h('button', {type: 'button', id: 'reveal-token', disabled: true}, 'Reveal');
  const remove = h('button', {type: 'button', id: 'remove-token', class: 'ghost', disabled: true}, 'Remove');
  const owner = h('select', {id: 'assign-token', 'aria-label': 'Whose token', disabled: true});
  const search = h('input', {id: 'asset-search', type: 'search', placeholder: 'Find a token in the packs…', 'aria-label': 'Find a token in the packs'});
  const results = h('div', {id: 'asset-results', class: 'asset-results'});
  const saveName = h('input', {id: 'save-name', type: 'text', maxlength: '128', placeholder: 'Name of the saved map', 'aria-label': 'Name of the saved map'});
  const save = h('button', {type: 'button', id: 'save-map'}, 'Save the table');
  const saved = h('select', {id: 'saved-maps', 'aria-label': 'Saved maps'});
  const replaceButton = h('button', {type: 'button', id: 'replace-map', class: 'ghost'}, 'Replace the map');
  const myName = h('input', {id: 'host-name', type: 'text', maxlength: '64', autocomplete: 'nickname', value: hostName() ?? '',
    placeholder: 'Host'});
  const setName = h('button', {type: 'button', id: 'host-name-set'}, 'Set');
  const code = session.you?.joinCode;
  const panel = h('section', {id: 'host-panel', class: 'host-panel'},
    code ? inviteCard(code) : null,
    h('label', {for: 'host-name'}, 'Your name at the table'), h('div', {class: 'row'}, myName, setName),
    h('h3', {}, 'Host'), selected, h('div', {class: 'row'}, hide, reveal, remove), h('label', {for: 'assign-token'}, 'Belongs to'), owner,
    h('h3', {}, 'Add a token'), search, results,
    h('h3', {}, 'Map'), h('div', {class: 'row'}, saveName, save), h('div', {class: 'row'}, saved, replaceButton));
  main.querySelector('.table-side').appendChild(panel);
  // The players see the host by this name (kept in this browser): the live channel reconnects with it.
  setName.addEventListener('click', () => {
    const chosen = myName.value.trim();
    if (chosen) localStorage.setItem('hoard.hostName', chosen); else localStorage.removeItem('hoard.hostName');
    table.live.name = chosen || undefined;
    table.live.socket?.close(4000, 'the host renamed themselves');
  });

  const current = () => (state.map?.tokens ?? []).find((token) => token?.id === state.selected);
  const send = (op, what) => table.send(op).catch(table.refused(what));
  const show = () => {
    const token = current();
    for (const control of [hide, reveal, remove, owner]) control.disabled = !token;
    replace(owner, h('option', {value: ''}, 'the host'),
      [...state.people].filter(([id]) => !id.startsWith('host:')).map(([id, person]) => h('option', {value: id, selected: token?.owner === id}, person.name)));
    selected.textContent = token
      ? `${token.label ?? 'Token'} ${token.number ?? ''}${token.hidden ? ' · hidden' : ''}${token.owner ? ` · ${state.people.get(token.owner)?.name ?? 'a player'}'s` : ''}`
      : 'Click a token to select it.';
  };
  main.addEventListener('table:select', show);
  hide.addEventListener('click', () => send({kind: 'hide', token: state.selected}, 'hiding it').then(show));
  reveal.addEventListener('click', () => send({kind: 'reveal', token: state.selected}, 'revealing it').then(show));
  remove.addEventListener('click', () => send({kind: 'remove', token: state.selected}, 'removing it').then(show));
  owner.addEventListener('change', () => send({kind: 'assign', token: state.selected, owner: owner.value || null}, 'the assignment').then(show));

  let searching = 0;
  search.addEventListener('input', () => {
    clearTimeout(searching);
    searching = setTimeout(async () => {
      const page = await request('/v1/assets' + query({kind: 'token', q: search.value.trim(), limit: 24}));
      replace(results, page.assets.map((asset) => {
        const image = h('img', {alt: '', width: '40', height: '40'});
        const digest = thumbnailDigest(asset);
        if (digest) pictureURL(digest).then((url) => { image.src = url; }, () => {});
        const button = h('button', {type: 'button', class: 'asset-choice', title: asset.name, dataset: {digest: asset.digest}}, image, h('span', {}, asset.name));
        button.addEventListener('click', () => {
          const [x, y] = table.centreTile();
          const width = state.map?.grid?.width ?? 1;
          const height = state.map?.grid?.height ?? 1;
          const number = 1 + Math.max(0, ...(state.map?.tokens ?? []).map((t) => (Number.isInteger(t?.number) ? t.number : 0)));
          const token = {id: newId('t'), asset: asset.digest, x: Math.max(0, Math.min(width - 1, x)), y: Math.max(0, Math.min(height - 1, y)), number: Math.min(999, number)};
          send({kind: 'add', token}, 'the new token');
        });
        return button;
      }));
    }, 200);
  });

  const listSaved = async () => {
    const {maps} = await request('/v1/maps');
    replace(saved, maps.map((map) => h('option', {value: map.name}, map.name)));
    replaceButton.disabled = maps.length === 0;
  };
  save.addEventListener('click', async () => {
    const name = saveName.value.trim() || `${session.name} ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`;
    try {
      await request('/v1/maps', {method: 'POST', json: {name, session: session.id}});
      toast(`Saved as “${name}”`);
      table.setStatus(`Saved the table as “${name}”.`, 'info');
      await listSaved();
    } catch (error) { table.setStatus(`Cannot save the map: ${error.message}`); }
  });
  replaceButton.addEventListener('click', async () => {
    if (!saved.value) return;
    try {
      const {map} = await request(`/v1/maps/${encodeURIComponent(saved.value)}`);
      await request(`/v1/sessions/${encodeURIComponent(session.id)}/map`, {method: 'PUT', json: map});
      table.setStatus(`The map is now “${saved.value}”.`, 'info');
    } catch (error) { table.setStatus(`Cannot replace the map: ${error.message}`); }
  });
  listSaved().catch(() => {});
  show();
}
