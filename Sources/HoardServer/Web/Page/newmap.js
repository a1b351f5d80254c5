// "New map" in the lobby: a name, a size, the pixels of a cell and the kind of grid (and a background picture if the
// group has one) start a private session on an empty map and open its table, where the Build tools make the map and
// "Save the table" keeps it among the group's maps. The editor is the table before anyone joins.
import {api, query, uploadPicture} from './api.js';
import {h, replace} from './dom.js';

/** The lobby's card that makes a map from nothing. */
export function newMapCard() {
  const name = h('input', {type: 'text', id: 'new-map-name', maxlength: '128', required: true, autocomplete: 'off', placeholder: 'The crypt'});
  const number = (id, value, min, max) => h('input', {type: 'number', id, value: String(value), min: String(min), max: String(max), required: true});
  const width = number('new-map-width', 20, 1, 512);
  const height = number('new-map-height', 15, 1, 512);
  const pixels = number('new-map-pixels', 256, 8, 1024);
  const grid = h('select', {id: 'new-map-grid'},
    h('option', {value: 'square'}, 'Squares'), h('option', {value: 'flat'}, 'Hexes, flat tops'), h('option', {value: 'pointy'}, 'Hexes, pointy tops'));
  const background = h('select', {id: 'new-map-background'}, h('option', {value: ''}, 'None: paint the floor'));
  const battlemap = h('input', {type: 'file', id: 'new-map-battlemap', accept: 'image/png,image/jpeg,image/webp'});
  const go = h('button', {type: 'submit', class: 'primary', id: 'new-map-button'}, 'Make the map');
  const out = h('p', {id: 'new-map-status', role: 'status'});
  const field = (label, control) => h('label', {class: 'field'}, h('span', {}, label), control);
  const form = h('form', {class: 'card new-map', id: 'new-map-form'}, h('h2', {}, 'New map'),
    h('p', {class: 'muted'}, 'Opens an empty table to build on: paint the floor, draw walls and doors, place tokens, then save it.'),
    field('Name', name), h('div', {class: 'row'}, field('Width (cells)', width), field('Height (cells)', height)),
    field('Pixels a cell', pixels), field('Grid', grid), field('Background picture', background),
    field('…or upload a battlemap (drawn over the whole map)', battlemap),
    h('p', {class: 'actions'}, go), out);
  api('/v1/assets' + query({kind: 'background', limit: 50})).then(({assets}) => {
    for (const asset of assets) background.append(h('option', {value: asset.digest}, asset.name));
  }, () => {});
  // Pictures the member uploaded to their own space before: a battlemap used again.
  api('/v1/uploads' + query({limit: 50})).then(({uploads}) => {
    for (const upload of uploads.filter((u) => u.scope === 'member')) {
      background.append(h('option', {value: upload.digest, dataset: {upload: 'yes'}}, `Your picture of ${new Date(upload.uploadedAt).toLocaleDateString()}`));
    }
  }, () => {});
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    go.disabled = true;
    const cells = {width: Number(width.value), height: Number(height.value), tilePixels: Number(pixels.value)};
    if (grid.value !== 'square') Object.assign(cells, {type: 'hex', orientation: grid.value, offset: 'odd'});
    try {
      // A background lies over the floor from the top-left cell: an asset on its own footprint, a battlemap someone
      // uploaded (which has none) over the whole map.
      let objects = [];
      if (battlemap.files.length) {
        const stored = await uploadPicture(battlemap.files[0]);
        objects = [{id: 'background', asset: stored.digest, x: 0, y: 0, footprint: {width: cells.width, height: cells.height}}];
      } else if (background.value) {
        const uploaded = background.selectedOptions[0]?.dataset.upload === 'yes';
        objects = [{id: 'background', asset: background.value, x: 0, y: 0, ...(uploaded ? {footprint: {width: cells.width, height: cells.height}} : {})}];
      }
      const map = {
        schema: 'hoard.map/v2', name: name.value.trim(), grid: cells,
        background: {color: '#3b3a36'}, drawing: {walls: [], strokes: []}, objects, tokens: [],
      };
      const created = await api('/v1/sessions', {method: 'POST', json: {name: name.value.trim(), map, visibility: 'private'}});
      location.assign(`/table/${created.id}`);
    } catch (error) {
      replace(out, h('span', {class: 'error'}, `Cannot make it: ${error.message}`));
      go.disabled = false;
    }
  });
  return form;
}

/**
 * The group's saved maps: each opens in the editor (a private session of it), is renamed, duplicated or deleted.
 * Saving never overwrites, so a rename saves under the new name, then deletes the old one.
 */
export function savedMapsCard(maps) {
  const list = h('ul', {id: 'saved-map-list', class: 'saved-maps'});
  const status = h('p', {id: 'saved-map-status', role: 'status'});
  const card = h('section', {class: 'card saved-maps-card', 'aria-labelledby': 'saved-maps-title'},
    h('h2', {id: 'saved-maps-title'}, 'Saved maps'), list, status);
  const path = (name) => `/v1/maps/${encodeURIComponent(name)}`;
  const fail = (what) => (error) => replace(status, h('span', {class: 'error'}, `Cannot ${what}: ${error.message}`));
  const show = (names) => {
    if (!names.length) { replace(list, h('li', {class: 'muted'}, 'None yet: make one with New map, then “Save the table”.')); return; }
    replace(list, names.map((name) => {
      const open = h('button', {type: 'button', class: 'small', dataset: {action: 'open'}}, 'Open in the editor');
      const rename = h('button', {type: 'button', class: 'ghost small', dataset: {action: 'rename'}}, 'Rename');
      const duplicate = h('button', {type: 'button', class: 'ghost small', dataset: {action: 'duplicate'}}, 'Duplicate');
      const remove = h('button', {type: 'button', class: 'ghost small danger', dataset: {action: 'delete'}}, 'Delete');
      const row = h('li', {dataset: {name}}, h('span', {class: 'saved-map-name'}, name), h('span', {class: 'row'}, open, rename, duplicate, remove));
      open.addEventListener('click', () => api('/v1/sessions', {method: 'POST', json: {name, fromMap: name, visibility: 'private'}})
        .then((created) => location.assign(`/table/${created.id}`), fail('open it')));
      duplicate.addEventListener('click', async () => {
        try {
          const {map} = await api(path(name));
          const copy = unusedName(`${name} (copy)`, names);
          await api('/v1/maps', {method: 'POST', json: {name: copy, map}});
          show([...names, copy].sort());
        } catch (error) { fail('duplicate it')(error); }
      });
      rename.addEventListener('click', () => {
        const field = h('input', {type: 'text', value: name, maxlength: '128', 'aria-label': `New name for ${name}`, dataset: {rename: name}});
        const keep = h('button', {type: 'submit', class: 'small primary'}, 'Rename');
        const form = h('form', {class: 'row'}, field, keep);
        form.addEventListener('submit', async (event) => {
          event.preventDefault();
          const renamed = field.value.trim();
          if (!renamed || renamed === name) { show(names); return; }
          try {
            const {map} = await api(path(name));
            await api('/v1/maps', {method: 'POST', json: {name: renamed, map}});
            await api(path(name), {method: 'DELETE'});
            show(names.map((other) => (other === name ? renamed : other)).sort());
          } catch (error) { fail('rename it')(error); }
        });
        replace(row, form);
        field.focus();
      });
      remove.addEventListener('click', async () => {
        if (remove.dataset.armed !== 'yes') { remove.dataset.armed = 'yes'; remove.textContent = 'Delete it?'; return; }
        try {
          await api(path(name), {method: 'DELETE'});
          show(names.filter((other) => other !== name));
        } catch (error) { fail('delete it')(error); }
      });
      return row;
    }));
  };
  show(maps.map((map) => map.name));
  return card;
}

/** `wanted`, or it with " 2", " 3"… when the group already has a map of that name. */
function unusedName(wanted, names) {
  let candidate = wanted;
  for (let n = 2; names.includes(candidate); n++) candidate = `${wanted} ${n}`;
  return candidate;
}
