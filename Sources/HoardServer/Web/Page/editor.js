// The referee's building tools at the table: paint the floor from a palette of the group's textures (brush,
// rectangle, fill, erase), build walls and doors, turn fog on and reveal or cover parts of the map, and undo or redo
// one's own edits. Every tool sends the ops the server already applies (paint, wall, door, fog), so the table the
// players see is built the same way; an undo sends the inverse ops. The map editor is this table before anyone joins.
import {pictureURL, query, thumbnailDigest} from './api.js';
import {h, replace} from './dom.js';
import {geometry} from './grid.js';
import {layers} from './mapview.js';
import {newId} from './tablestate.js';

const TOOLS = [
  ['brush', 'Brush', 'b'], ['rect', 'Rectangle', 'r'], ['fill', 'Fill', 'f'], ['erase', 'Erase', 'e'],
  ['wall', 'Wall', 'w'], ['door', 'Door', 'd'], ['reveal', 'Reveal', 'v'], ['cover', 'Cover', 'c'], ['place', 'Place', 'p'],
];
const UNDO_DEPTH = 200;

/** Adds the "Build" section to the host's panel; `table` is the live table (join.js), `request` the API caller. */
export function editorTools(main, table, request) {
  const {state} = table;
  const world = () => layers(state.map);
  const send = (op, what) => table.send(op).catch(table.refused(what));
  const buttons = TOOLS.map(([tool, label, key]) => h('button', {
    type: 'button', class: 'tool', dataset: {tool}, 'aria-pressed': 'false', title: `${label} (${key.toUpperCase()})`,
    'aria-keyshortcuts': key.toUpperCase(),
  }, label));
  const search = h('input', {id: 'texture-search', type: 'search', placeholder: 'Find a texture…', 'aria-label': 'Find a texture'});
  const palette = h('div', {id: 'texture-palette', class: 'asset-results', role: 'listbox', 'aria-label': 'Textures'});
  const chosen = h('p', {id: 'texture-chosen', class: 'muted'}, 'Pick a texture to paint with.');
  const placeKind = h('select', {id: 'place-kind', 'aria-label': 'What to place'},
    h('option', {value: 'token'}, 'Tokens'), h('option', {value: 'object'}, 'Objects'));
  const placeSearch = h('input', {id: 'place-search', type: 'search', placeholder: 'Find art to place…', 'aria-label': 'Find art to place'});
  const placeList = h('div', {id: 'place-results', class: 'asset-results', role: 'listbox', 'aria-label': 'Art to place'});
  const fog = h('input', {id: 'fog-enabled', type: 'checkbox', checked: state.map?.fog?.enabled === true});
  const viewAs = h('select', {id: 'view-as', 'aria-label': 'See the table as'});
  const glimpseTo = h('select', {id: 'glimpse-to', multiple: true, size: '3', 'aria-label': 'Glimpse to (one or more players)'});
  const fogBrush = h('input', {id: 'fog-brush', type: 'checkbox'});
  const vision = h('input', {id: 'vision-enabled', type: 'checkbox', checked: state.map?.vision?.enabled === true});
  const glimpseSeconds = h('input', {id: 'glimpse-seconds', type: 'number', min: '1', max: '60', value: '5', 'aria-label': 'Seconds'});
  const glimpse = h('button', {type: 'button', id: 'glimpse-token', class: 'small'}, 'Glimpse');
  const layerName = h('input', {id: 'layer-name', type: 'text', maxlength: '64', placeholder: 'Layer', 'aria-label': 'Layer of the selected token'});
  const layerVisible = h('select', {id: 'layer-visible', 'aria-label': 'Who sees that layer'},
    h('option', {value: '*'}, 'Everyone sees it'), h('option', {value: ''}, 'Only the host'));
  const layerApply = h('button', {type: 'button', id: 'layer-apply', class: 'small'}, 'Set');
  const undo = h('button', {type: 'button', id: 'undo-edit', class: 'ghost', disabled: true, title: 'Undo (Ctrl+Z)'}, 'Undo');
  const redo = h('button', {type: 'button', id: 'redo-edit', class: 'ghost', disabled: true, title: 'Redo (Ctrl+Shift+Z)'}, 'Redo');
  const section = h('section', {id: 'editor-panel', class: 'editor-panel'},
    h('h3', {}, 'Build'), h('div', {class: 'row wrap', role: 'toolbar', 'aria-label': 'Building tools'}, ...buttons),
    search, palette, chosen,
    h('h4', {}, 'Place tokens and objects'), h('p', {class: 'muted'}, 'Drag one onto the map, or pick one and click where it goes.'),
    h('div', {class: 'row'}, placeKind, placeSearch), placeList,
    h('label', {class: 'row'}, fog, h('span', {}, 'Fog of war (players see only what is revealed)')),
    h('label', {class: 'row'}, fogBrush, h('span', {}, 'Reveal and cover with a brush, not a rectangle')),
    h('label', {class: 'row'}, vision, h('span', {}, 'Vision (players see what their tokens with sight see)')),
    h('div', {class: 'row'}, undo, redo),
    h('h4', {}, 'What players see'), h('label', {class: 'field'}, h('span', {}, 'See the table as'), viewAs),
    h('p', {class: 'muted'}, 'The selected token, shown for a moment to one player:'),
    h('div', {class: 'row'}, glimpseTo, glimpseSeconds, glimpse),
    h('p', {class: 'muted'}, 'The selected token’s layer, and who sees that layer:'),
    h('div', {class: 'row'}, layerName, layerVisible, layerApply));
  const panel = main.querySelector('#host-panel') ?? main.querySelector('.table-side');
  panel.insertBefore(section, panel.querySelector('h3:nth-of-type(2)'));

  const choose = (tool) => {
    state.tool = tool;
    for (const button of main.querySelectorAll('.tool')) button.setAttribute('aria-pressed', String(button.dataset.tool === tool));
    main.querySelector('#table-canvas').dataset.tool = tool;
  };
  for (const button of buttons) button.addEventListener('click', () => choose(button.dataset.tool));

  // The palette: the group's textures, searched by name.
  let searching = 0;
  const listTextures = async () => {
    const page = await request('/v1/assets' + query({kind: 'texture', q: search.value.trim(), limit: 48}));
    replace(palette, page.assets.map((asset) => {
      const image = h('img', {alt: '', width: '40', height: '40'});
      const digest = thumbnailDigest(asset);
      if (digest) pictureURL(digest).then((url) => { image.src = url; }, () => {});
      const button = h('button', {
        type: 'button', class: 'asset-choice', role: 'option', title: asset.name, 'aria-selected': String(state.texture === asset.digest),
        dataset: {digest: asset.digest},
      }, image, h('span', {}, asset.name));
      button.addEventListener('click', () => {
        state.texture = asset.digest;
        for (const other of palette.children) other.setAttribute('aria-selected', String(other === button));
        chosen.textContent = `Painting with ${asset.name}.`;
        if (!['brush', 'rect', 'fill'].includes(state.tool)) choose('brush');
      });
      return button;
    }));
  };
  search.addEventListener('input', () => { clearTimeout(searching); searching = setTimeout(() => listTextures().catch(() => {}), 200); });
  listTextures().catch(() => {});

  // Art to place: picked (then a click places it) or dragged onto the canvas.
  let placeSearching = 0;
  const listPlaceable = async () => {
    const page = await request('/v1/assets' + query({kind: placeKind.value, q: placeSearch.value.trim(), limit: 48}));
    replace(placeList, page.assets.map((asset) => {
      const image = h('img', {alt: '', width: '40', height: '40', draggable: 'false'});
      const digest = thumbnailDigest(asset);
      if (digest) pictureURL(digest).then((url) => { image.src = url; }, () => {});
      const button = h('button', {
        type: 'button', class: 'asset-choice', role: 'option', title: asset.name, draggable: 'true',
        'aria-selected': String(state.placing?.digest === asset.digest), dataset: {digest: asset.digest},
      }, image, h('span', {}, asset.name));
      const pick = () => {
        state.placing = {digest: asset.digest, layer: placeKind.value, name: asset.name};
        for (const other of placeList.children) other.setAttribute('aria-selected', String(other === button));
      };
      button.addEventListener('click', () => { pick(); choose('place'); });
      button.addEventListener('dragstart', (event) => { pick(); event.dataTransfer.setData('text/plain', asset.digest); });
      return button;
    }));
  };
  placeSearch.addEventListener('input', () => { clearTimeout(placeSearching); placeSearching = setTimeout(() => listPlaceable().catch(() => {}), 200); });
  placeKind.addEventListener('change', () => listPlaceable().catch(() => {}));
  listPlaceable().catch(() => {});
  const place = (cell) => {
    if (!state.placing || !inside(cell)) return;
    const {digest, layer, name} = state.placing;
    const entity = {id: newId(layer === 'token' ? 't' : 'o'), asset: digest, x: cell[0], y: cell[1]};
    if (layer === 'token') {
      entity.number = Math.min(999, 1 + Math.max(0, ...(state.map?.tokens ?? []).map((t) => (Number.isInteger(t?.number) ? t.number : 0))));
      entity.label = name;
    }
    edit([{kind: 'add', [layer]: entity}], [{kind: 'remove', [layer]: entity.id}], `placing ${name}`);
  };
  const canvas = main.querySelector('#table-canvas');
  canvas.addEventListener('dragover', (event) => { if (state.placing) event.preventDefault(); });
  canvas.addEventListener('drop', (event) => {
    event.preventDefault();
    const box = canvas.getBoundingClientRect();
    const view = table.view;
    place(cellOf([(event.clientX - box.left - view.x) / view.tile, (event.clientY - box.top - view.y) / view.tile]));
  });

  // The players' side: see the table as one of them; a glimpse; layers.
  const players = () => [...state.people].filter(([id]) => !id.startsWith('host:'));
  let shownPlayers = '';
  const showPlayers = () => {
    const key = players().map(([id, person]) => `${id}:${person.name}`).join('|');
    if (key === shownPlayers) return;  // rebuilt only when someone came or went, not under a hand choosing
    shownPlayers = key;
    const current = viewAs.value;
    replace(viewAs, h('option', {value: ''}, 'the host (everything)'), players().map(([id, person]) => h('option', {value: id, selected: id === current}, person.name)));
    replace(glimpseTo, players().map(([id, person]) => h('option', {value: id}, person.name)));
    glimpse.disabled = players().length === 0;
  };
  showPlayers();
  setInterval(showPlayers, 2000);
  // The host's map holds every participant's seen and explored tiles as of its last snapshot: the server decides sight
  // and sends the host the ops, not each player's new view. Seen as a player, the table asks for them again after a
  // change (one request per burst; an answer overtaken by a later one is dropped), so it shows what that player's page
  // shows.
  let asking = 0;
  let asked = 0;
  const refreshSight = () => {
    clearTimeout(asking);
    asking = setTimeout(async () => {
      if (!viewAs.value || state.map?.vision?.enabled !== true) return;
      const ask = ++asked;
      const session = await request(`/v1/sessions/${encodeURIComponent(table.session.id)}`).catch(() => null);
      if (ask !== asked || !session?.map?.vision || !state.map) return;
      state.map.vision = session.map.vision;
      table.mapChanged();
    }, 150);
  };
  main.addEventListener('table:op', () => { if (viewAs.value) refreshSight(); });
  viewAs.addEventListener('change', () => {
    state.viewFilter = viewAs.value ? (w) => playerView(w, viewAs.value) : null;
    table.render();
    refreshSight();
  });
  glimpse.addEventListener('click', () => {
    const to = [...glimpseTo.selectedOptions].map((option) => option.value);
    if (!state.selected || !to.length) { table.setStatus('Select a token, then the players to show it to.', 'info'); return; }
    send({kind: 'reveal', token: state.selected, to, seconds: Math.max(1, Math.min(60, Number(glimpseSeconds.value) || 5))}, 'the glimpse');
  });
  layerApply.addEventListener('click', () => {
    const layer = layerName.value.trim();
    if (!layer) return;
    const ops = [{kind: 'layer', layer, visibleTo: layerVisible.value === '*' ? '*' : []}];
    if (state.selected) ops.unshift({kind: 'set', token: state.selected, layer});
    for (const op of ops) send(op, 'the layer');
  });

  // Undo and redo: each edit keeps the ops that take it back and the ops that do it again.
  const done = [];
  const undone = [];
  const showHistory = () => { undo.disabled = done.length === 0; redo.disabled = undone.length === 0; };
  const edit = (forward, backward, what) => {
    if (!forward.length) return;
    done.push({forward, backward, what});
    if (done.length > UNDO_DEPTH) done.shift();
    undone.length = 0;
    showHistory();
    for (const op of forward) send(op, what);
  };
  const step = (from, to, pick) => {
    const entry = from.pop();
    if (!entry) return;
    to.push(entry);
    showHistory();
    for (const op of entry[pick]) send(op, `the ${pick === 'backward' ? 'undo' : 'redo'} of ${entry.what}`);
  };
  undo.addEventListener('click', () => step(done, undone, 'backward'));
  redo.addEventListener('click', () => step(undone, done, 'forward'));

  fog.addEventListener('change', () => edit([{kind: 'fog', enabled: fog.checked}], [{kind: 'fog', enabled: !fog.checked}], 'the fog'));
  vision.addEventListener('change', () => edit([{kind: 'vision', enabled: vision.checked}], [{kind: 'vision', enabled: !vision.checked}], 'vision'));

  // The floor as it is: each cell's texture (null: the map's own).
  const floorNow = () => {
    const cells = new Map();
    for (const tile of world().tiles) cells.set(`${tile.x},${tile.y}`, tile.texture ?? null);
    return cells;
  };
  /** Paint ops that give `cells` (keys "x,y") the texture each has in `before`, one row run per op rectangle. */
  const restore = (cells, before) => {
    const byTexture = new Map();
    for (const key of cells) {
      const texture = before.get(key) ?? null;
      if (!byTexture.has(texture)) byTexture.set(texture, []);
      byTexture.get(texture).push(key.split(',').map(Number));
    }
    return [...byTexture].map(([texture, list]) => ({kind: 'paint', rects: runs(list), texture}));
  };
  const paint = (cells, texture, what) => {
    const keys = [...new Set(cells.map(([x, y]) => `${x},${y}`))];
    if (!keys.length) return;
    const before = floorNow();
    edit([{kind: 'paint', rects: runs(keys.map((key) => key.split(',').map(Number))), texture}], restore(keys, before), what);
  };
  const fogCells = (cells, reveal) => {
    cells = [...new Map(cells.map((cell) => [`${cell[0]},${cell[1]}`, cell])).values()];
    const rects = runs(cells);
    if (!rects.length) return;
    const revealed = revealedNow();
    const changed = cells.filter(([x, y]) => revealed.has(`${x},${y}`) !== reveal);
    const back = runs(changed);
    edit([{kind: 'fog', [reveal ? 'reveal' : 'cover']: rects}], back.length ? [{kind: 'fog', [reveal ? 'cover' : 'reveal']: back}] : [],
      reveal ? 'revealing' : 'covering');
  };
  const revealedNow = () => {
    const set = new Set();
    const w = world();
    if (!w.fog) return set;
    for (let y = 0; y < w.height; y++) for (let x = 0; x < w.width; x++) if (w.fog[y * w.width + x]) set.add(`${x},${y}`);
    return set;
  };

  // Pointer work, called by gestures.js while a building tool is chosen; points in tile units.
  let drag = null;
  const inside = ([x, y]) => { const w = world(); return x >= 0 && y >= 0 && x < w.width && y < w.height; };
  const cellOf = (point) => geometry(world()).cellAt(...point);
  const box = (a, b) => {
    const [x0, x1] = [Math.min(a[0], b[0]), Math.max(a[0], b[0])];
    const [y0, y1] = [Math.min(a[1], b[1]), Math.max(a[1], b[1])];
    const cells = [];
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (inside([x, y])) cells.push([x, y]);
    return cells;
  };
  state.editor = {
    handles: (tool) => TOOLS.some(([name]) => name === tool),
    down(point) {
      const cell = cellOf(point);
      const tool = state.tool;
      if ((tool === 'brush' || tool === 'rect' || tool === 'fill') && !state.texture) {
        table.setStatus('Pick a texture in the palette first.', 'info');
        return;
      }
      if (tool === 'fill') {
        if (inside(cell)) paint(flood(world(), floorNow(), cell), state.texture, 'the fill');
        return;
      }
      if (tool === 'door') { toggleDoor(point); return; }
      if (tool === 'place') { place(cell); return; }
      drag = {tool, start: point, cell, cells: inside(cell) ? [cell] : [], now: point};
    },
    move(point) {
      if (!drag) return;
      drag.now = point;
      const cell = cellOf(point);
      const brushing = drag.tool === 'brush' || drag.tool === 'erase' || ((drag.tool === 'reveal' || drag.tool === 'cover') && fogBrush.checked);
      if (brushing) { if (inside(cell)) drag.cells.push(cell); } else drag.cells = box(drag.cell, cell);
    },
    up(point) {
      if (!drag) return;
      this.move(point);
      const {tool, cells, start} = drag;
      drag = null;
      if (tool === 'brush' || tool === 'rect') paint(cells, state.texture, 'the paint');
      else if (tool === 'erase') paint(cells, null, 'the eraser');
      else if (tool === 'reveal' || tool === 'cover') fogCells(cells, tool === 'reveal');
      else if (tool === 'wall') buildWall(start, point);
    },
  };
  const buildWall = (from, to) => {
    const cells = geometry(world());
    let wall;
    if (cells.hex) {
      // A click on a hex: the side nearest the pointer.
      const [x, y] = cellOf(to);
      if (!inside([x, y])) return;
      let best = 0;
      let nearest = Infinity;
      for (let side = 0; side < 6; side++) {
        const ends = cells.edge(x, y, side);
        if (ends.length !== 2) continue;
        const [mx, my] = [(ends[0][0] + ends[1][0]) / 2, (ends[0][1] + ends[1][1]) / 2];
        const distance = Math.hypot(mx - to[0], my - to[1]);
        if (distance < nearest) { nearest = distance; best = side; }
      }
      wall = {id: newId('w'), cell: [x, y], side: best};
    } else {
      // From the corner nearest where the drag began to the one nearest where it ended.
      const snap = ([ux, uy]) => {
        const w = world();
        return [Math.max(0, Math.min(w.width, Math.round(ux))), Math.max(0, Math.min(w.height, Math.round(uy)))];
      };
      const [a, b] = [snap(from ?? to), snap(to)];
      if (a[0] === b[0] && a[1] === b[1]) return;
      wall = {id: newId('w'), from: a, to: b};
    }
    if (main.querySelector('#wall-door')?.checked) wall.door = true;
    edit([{kind: 'wall', add: wall}], [{kind: 'wall', remove: wall.id}], 'the wall');
  };
  const toggleDoor = (point) => {
    const cells = geometry(world());
    const ends = (wall) => (cells.hex && Array.isArray(wall?.cell)
      ? cells.edge(wall.cell[0], wall.cell[1], wall.side)
      : [wall?.from ?? [0, 0], wall?.to ?? [0, 0]]);
    const near = world().walls.map((wall) => ({wall, distance: toSegment(point, ...ends(wall))}))
      .filter(({distance}) => distance < 0.35).sort((a, b) => a.distance - b.distance)[0];
    if (!near) { table.setStatus('Click on a wall to make it a door, or on a door to open or close it.', 'info'); return; }
    const {wall} = near;
    if (wall.door) {
      edit([{kind: 'door', wall: wall.id, open: wall.open !== true}], [{kind: 'door', wall: wall.id, open: wall.open === true}], 'the door');
    } else {
      const door = {...wall, door: true};
      edit([{kind: 'wall', remove: wall.id}, {kind: 'wall', add: door}], [{kind: 'wall', remove: wall.id}, {kind: 'wall', add: wall}], 'the door');
    }
  };
  const doorBox = h('label', {class: 'row'}, h('input', {id: 'wall-door', type: 'checkbox'}), h('span', {}, 'New walls are doors'));
  section.insertBefore(doorBox, search);

  // What the drag would change, drawn over the table.
  state.overlay = (context, t) => {
    if (!drag || drag.tool === 'wall') {
      if (drag?.tool === 'wall' && !geometry(world()).hex) {
        context.strokeStyle = 'rgba(29, 26, 23, 0.8)';
        context.lineWidth = Math.max(3, t * 0.22);
        context.beginPath();
        context.moveTo(Math.round(drag.start[0]) * t, Math.round(drag.start[1]) * t);
        context.lineTo(Math.round(drag.now[0]) * t, Math.round(drag.now[1]) * t);
        context.stroke();
      }
      return;
    }
    const cells = geometry(world());
    context.fillStyle = drag.tool === 'cover' ? 'rgba(12, 14, 24, 0.45)' : 'rgba(90, 176, 255, 0.35)';
    context.beginPath();
    for (const [x, y] of drag.cells) cells.trace(context, x, y, t);
    context.fill();
  };

  // Keyboard shortcuts, unless typing.
  document.addEventListener('keydown', (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLSelectElement) return;
    const key = event.key.toLowerCase();
    if ((event.ctrlKey || event.metaKey) && key === 'z') { event.preventDefault(); (event.shiftKey ? redo : undo).click(); return; }
    if ((event.ctrlKey || event.metaKey) && key === 'y') { event.preventDefault(); redo.click(); return; }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const tool = TOOLS.find(([, , shortcut]) => shortcut === key);
    if (tool) choose(tool[0]); else if (key === 'escape' || key === 'm') choose('move');
  });
}

/** Cells as rectangles [x, y, w, 1], one per run of neighbours in a row. */
export function runs(cells) {
  const rows = new Map();
  for (const [x, y] of cells) {
    if (!rows.has(y)) rows.set(y, new Set());
    rows.get(y).add(x);
  }
  const rects = [];
  for (const [y, xs] of [...rows].sort((a, b) => a[0] - b[0])) {
    const sorted = [...xs].sort((a, b) => a - b);
    let start = sorted[0];
    for (let i = 1; i <= sorted.length; i++) {
      if (i === sorted.length || sorted[i] !== sorted[i - 1] + 1) {
        rects.push([start, y, sorted[i - 1] - start + 1, 1]);
        start = sorted[i];
      }
    }
  }
  return rects;
}

/** The cells reached from `start` through neighbours of the same texture (the map's grid decides who neighbours). */
function flood(world, floor, start) {
  const cells = geometry(world);
  const key = ([x, y]) => `${x},${y}`;
  const texture = floor.get(key(start)) ?? null;
  const seen = new Set([key(start)]);
  const queue = [start];
  const out = [];
  while (queue.length && out.length < world.width * world.height) {
    const [x, y] = queue.shift();
    out.push([x, y]);
    for (const next of cells.neighbours(x, y)) {
      if (next[0] < 0 || next[1] < 0 || next[0] >= world.width || next[1] >= world.height) continue;
      if (seen.has(key(next)) || (floor.get(key(next)) ?? null) !== texture) continue;
      seen.add(key(next));
      queue.push(next);
    }
  }
  return out;
}

/** The distance from point p to the segment a–b. */
function toSegment([px, py], [ax, ay], [bx, by]) {
  const [dx, dy] = [bx - ax, by - ay];
  const length = dx * dx + dy * dy;
  const t = length ? Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / length)) : 0;
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/**
 * The table as `participant` is shown it (for the host's "see the table as"), by the rules the server applies:
 * hidden tokens only to their owner, layers to their audience, and under fog only what fog reveals (a player's own
 * tokens anywhere). The server decides what players are sent; this draws the same view for the host to check.
 */
export function playerView(world, participant) {
  const cells = geometry(world);
  const inside = (x, y) => x >= 0 && y >= 0 && x < world.width && y < world.height;
  const flag = (flags, x, y) => inside(x, y) && flags?.[y * world.width + x] === 1;
  // With vision on, tokens and objects show where the player sees now, floor and walls where they explored.
  const vision = world.vision;
  const seenNow = (x, y) => flag(world.fog, x, y) || flag(vision?.seen[participant], x, y);
  const explored = (x, y) => flag(world.fog, x, y) || flag(vision?.explored[participant], x, y);
  const revealed = (x, y) => (vision ? explored(x, y) : !world.fog || flag(world.fog, x, y));
  const layerSees = (layer) => {
    const audience = world.layers?.[layer];
    return layer === undefined || audience === undefined || audience === '*' || (Array.isArray(audience) && audience.includes(participant));
  };
  const placeSeen = (item) => {
    const [x, y] = [Math.floor(item?.x ?? -1), Math.floor(item?.y ?? -1)];
    return vision ? seenNow(x, y) : revealed(x, y);
  };
  const tokens = world.tokens.filter((token) => token?.owner === participant
    || (token?.hidden !== true && layerSees(token?.layer) && placeSeen(token)));
  const objects = world.objects.filter(placeSeen);
  const walls = world.walls.filter((wall) => {
    if (!world.fog && !vision) return true;
    const ends = cells.hex && Array.isArray(wall?.cell) ? [wall.cell, wall.cell] : [wall?.from ?? [0, 0], wall?.to ?? [0, 0]];
    return ends.some(([x, y]) => [[x, y], [x - 1, y], [x, y - 1], [x - 1, y - 1]].some(([cx, cy]) => revealed(cx, cy)));
  });
  let {texture, tiles} = world;
  if (world.fog || vision) {
    const painted = new Set(tiles.map((t) => `${t.x},${t.y}`));
    tiles = tiles.filter((t) => revealed(t.x, t.y));
    for (let y = 0; y < world.height; y++) {
      for (let x = 0; x < world.width; x++) if (revealed(x, y) && !painted.has(`${x},${y}`)) tiles.unshift({x, y, texture});
    }
    texture = null;
  }
  return {...world, texture, tiles, tokens, objects, walls, strokes: world.strokes, viewer: participant};
}
