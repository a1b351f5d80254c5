// The table as this page holds it: a map document (Schemas/map.schema.json) that each `op` event changes, as the
// server's HoardCore.Table did before sending it. The server has checked every op and sent this viewer only what
// it sees, so this applies without asking who may do what.

/** A short random id for a stroke or token. */
export const newId = (prefix) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

const list = (value) => (Array.isArray(value) ? value : []);

function upsert(items, item) {
  const index = items.findIndex((existing) => existing?.id === item.id);
  if (index >= 0) items[index] = item; else items.push(item);
}

/** Fog rectangles as row runs over a revealed-tile grid, after revealing and covering `rects`. */
function fogAfter(revealed, width, height, reveal, cover) {
  const tiles = new Uint8Array(width * height);
  const mark = (rects, value) => {
    for (const [x, y, w, h] of list(rects)) {
      for (let j = Math.max(0, y); j < Math.min(height, y + h); j++) for (let i = Math.max(0, x); i < Math.min(width, x + w); i++) tiles[j * width + i] = value;
    }
  };
  mark(revealed, 1);
  mark(reveal, 1);
  mark(cover, 0);
  const rects = [];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (!tiles[y * width + x]) continue;
      let end = x;
      while (end + 1 < width && tiles[y * width + end + 1]) end++;
      rects.push([x, y, end - x + 1, 1]);
      x = end;
    }
  }
  return rects;
}

/** Applies one op (as the `op` event carried it) to `map` in place; `viewer`: the participant whose map it is. */
export function applyOp(map, op, viewer) {
  if (!map || typeof map !== 'object' || !op) return;
  map.tokens = list(map.tokens);
  map.objects = list(map.objects);
  map.drawing ??= {};
  const tokens = map.tokens;
  const token = (id) => tokens.find((t) => t?.id === id);
  switch (op.kind) {
  case 'move': {
    const moved = token(op.token);
    if (moved) { moved.x = op.x; moved.y = op.y; }
    break;
  }
  case 'add':
    if (op.token) upsert(tokens, op.token);
    if (op.object) upsert(map.objects, op.object);
    break;
  case 'remove':
    if (op.token) map.tokens = tokens.filter((t) => t?.id !== op.token);
    if (op.object) map.objects = map.objects.filter((o) => o?.id !== op.object);
    break;
  case 'set': {
    const changed = token(op.token);
    if (!changed) break;
    for (const key of ['label', 'number', 'markers', 'layer']) {
      if (!(key in op)) continue;
      if (op[key] === null) delete changed[key]; else changed[key] = op[key];
    }
    break;
  }
  case 'assign': {
    const given = token(op.token);
    if (given) { if (op.owner) given.owner = op.owner; else delete given.owner; }
    break;
  }
  case 'hide': {
    // The end of a glimpse changes nothing for the host; those it ends for are sent a `remove`.
    const hidden = token(op.token);
    if (hidden && !op.from) hidden.hidden = true;
    break;
  }
  case 'reveal': {
    const shown = token(op.token);
    if (shown && !op.to) delete shown.hidden;
    break;
  }
  case 'stroke':
    map.drawing.strokes = list(map.drawing.strokes);
    upsert(map.drawing.strokes, op.stroke);
    break;
  case 'erase':
    map.drawing.strokes = list(map.drawing.strokes).filter((s) => s?.id !== op.stroke);
    break;
  case 'layer':
    map.drawing.layers = {...(map.drawing.layers ?? {}), [op.layer]: op.visibleTo};
    break;
  case 'dice':
    map.dice = {...(map.dice ?? {}), [op.by]: op.asset};
    if (!op.asset) delete map.dice[op.by];
    break;
  case 'wall':
    map.drawing.walls = list(map.drawing.walls);
    if (op.add) upsert(map.drawing.walls, op.add);
    if (op.remove) map.drawing.walls = map.drawing.walls.filter((w) => w?.id !== op.remove);
    break;
  case 'door': {
    const door = list(map.drawing.walls).find((w) => w?.id === op.wall);
    if (door) door.open = op.open;
    break;
  }
  case 'paint': {
    const background = map.background ??= {};
    background.palette = list(background.palette);
    background.rects = list(background.rects);
    let index = -1;
    if (op.texture) {
      index = background.palette.indexOf(op.texture);
      if (index < 0) { background.palette.push(op.texture); index = background.palette.length - 1; }
    }
    for (const [x, y, w, h] of list(op.rects)) background.rects.push([x, y, w, h, index]);
    break;
  }
  case 'fog': {
    const fog = map.fog ??= {enabled: false, revealed: []};
    if (typeof op.enabled === 'boolean') fog.enabled = op.enabled;
    if (op.reveal || op.cover) {
      fog.revealed = fogAfter(fog.revealed, map.grid?.width ?? 0, map.grid?.height ?? 0, op.reveal, op.cover);
    }
    break;
  }
  case 'view': {
    // What a player's view gained and lost (HoardCore.ViewChange.apply does the same).
    const gone = new Set(list(op.removed));
    map.tokens = tokens.filter((t) => !gone.has(t?.id));
    map.objects = map.objects.filter((o) => !gone.has(o?.id));
    map.drawing.walls = list(map.drawing.walls).filter((w) => !gone.has(w?.id));
    for (const t of list(op.tokens)) upsert(map.tokens, t);
    for (const o of list(op.objects)) upsert(map.objects, o);
    for (const w of list(op.walls)) upsert(map.drawing.walls, w);
    if (op.floor) {
      const background = map.background ??= {};
      background.palette = list(background.palette);
      background.rects = list(background.rects);
      const palette = list(op.floor.palette);
      for (const rect of list(op.floor.rects)) {
        const last = rect.length - 1;
        const texture = palette[rect[last]];
        let index = rect[last];
        if (texture) {
          index = background.palette.indexOf(texture);
          if (index < 0) { background.palette.push(texture); index = background.palette.length - 1; }
        }
        background.rects.push([...rect.slice(0, last), index]);
      }
      for (const [key, value] of Object.entries(op.floor)) if (key !== 'palette' && key !== 'rects') background[key] = value;
    }
    const vision = map.vision ??= {enabled: true, explored: {}};
    if (viewer) {
      vision.explored = {...(vision.explored ?? {}), [viewer]: [...list(vision.explored?.[viewer]), ...list(op.explored)]};
      vision.seen = {[viewer]: list(op.seen)};
    }
    break;
  }
  case 'vision': {
    // The host's copy; players are sent their whole view again.
    const vision = map.vision ??= {enabled: false, explored: {}};
    if (typeof op.enabled === 'boolean') vision.enabled = op.enabled;
    for (const id of Array.isArray(op.forget) ? op.forget : []) delete vision.explored?.[id];
    break;
  }
  case 'settings':
    map.settings = {...(map.settings ?? {}), ...(typeof op.playersOpenDoors === 'boolean' ? {playersOpenDoors: op.playersOpenDoors} : {})};
    break;
  default:
    break;
  }
}

/** Every digest a map draws (floor, walls, objects, tokens). */
export function artOf(map) {
  const background = map?.background ?? {};
  return new Set([background.texture, ...list(background.palette), ...list(background.tiles).map((t) => t?.texture),
    ...list(map?.drawing?.walls).map((w) => w?.texture), ...list(map?.objects).map((o) => o?.asset),
    ...list(map?.tokens).map((t) => t?.asset)].filter((d) => typeof d === 'string' && d.startsWith('sha256:')));
}
