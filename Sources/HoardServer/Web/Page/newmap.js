// "New map" in the lobby: a name, a size, the pixels of a cell and the kind of grid (and a background picture if the
// group has one) start a private session on an empty map and open its table, where the Build tools make the map and
// "Save the table" keeps it among the group's maps. The editor is the table before anyone joins.
import {api, query} from './api.js';
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
  const go = h('button', {type: 'submit', class: 'primary', id: 'new-map-button'}, 'Make the map');
  const out = h('p', {id: 'new-map-status', role: 'status'});
  const field = (label, control) => h('label', {class: 'field'}, h('span', {}, label), control);
  const form = h('form', {class: 'card new-map', id: 'new-map-form'}, h('h2', {}, 'New map'),
    h('p', {class: 'muted'}, 'Opens an empty table to build on: paint the floor, draw walls and doors, place tokens, then save it.'),
    field('Name', name), h('div', {class: 'row'}, field('Width (cells)', width), field('Height (cells)', height)),
    field('Pixels a cell', pixels), field('Grid', grid), field('Background picture', background),
    h('p', {class: 'actions'}, go), out);
  api('/v1/assets' + query({kind: 'background', limit: 50})).then(({assets}) => {
    for (const asset of assets) background.append(h('option', {value: asset.digest}, asset.name));
  }, () => {});
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    go.disabled = true;
    const cells = {width: Number(width.value), height: Number(height.value), tilePixels: Number(pixels.value)};
    if (grid.value !== 'square') Object.assign(cells, {type: 'hex', orientation: grid.value, offset: 'odd'});
    const map = {
      schema: 'hoard.map/v2', name: name.value.trim(), grid: cells,
      background: {color: '#3b3a36'}, drawing: {walls: [], strokes: []},
      // A background picture (a battlemap) lies over the floor on its own footprint from the top-left cell.
      objects: background.value ? [{id: 'background', asset: background.value, x: 0, y: 0}] : [], tokens: [],
    };
    try {
      const created = await api('/v1/sessions', {method: 'POST', json: {name: name.value.trim(), map, visibility: 'private'}});
      location.assign(`/table/${created.id}`);
    } catch (error) {
      replace(out, h('span', {class: 'error'}, `Cannot make it: ${error.message}`));
      go.disabled = false;
    }
  });
  return form;
}
