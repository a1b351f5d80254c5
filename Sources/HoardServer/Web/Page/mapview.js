// Draws a map document (Schemas/map.schema.json) on a canvas from the session's manifest: floor textures per tile,
// drawings and walls, objects and numbered tokens on their footprints. Every asset's smallest picture (its generated
// preview, about 32 px a tile, else its smallest variant) is drawn first, so the map shows at once; variants big
// enough for the screen replace them as they arrive.
import {loadImage} from './api.js';
import {geometry, gridOf} from './grid.js';

const isDigest = (value) => typeof value === 'string' && /^sha256:[0-9a-f]{64}$/.test(value);

/**
 * What a reference names: an asset of the manifest (its footprint, and its pictures as `variants`, the preview
 * among them, smallest first) or a bare picture blob.
 */
export function resolver(manifest) {
  const assets = new Map((manifest?.assets ?? []).map((asset) => [asset.digest, asset]));
  const blobs = new Map((manifest?.blobs ?? []).map((blob) => [blob.digest, blob]));
  return (reference) => {
    if (!isDigest(reference)) return null;
    const asset = assets.get(reference);
    if (asset) {
      const variants = [asset.preview, ...asset.variants].filter(Boolean).sort((a, b) => a.width * a.height - b.width * b.height);
      return {footprint: asset.footprint, variants, name: asset.name};
    }
    const blob = blobs.get(reference);
    if (blob && blob.mediaType.startsWith('image/')) return {footprint: {width: 1, height: 1}, variants: [{digest: reference, width: 0, height: 0}]};
    return null;
  };
}

function number(value, fallback = 0) {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** The layers of a map document, read defensively: anything missing is empty. */
export function layers(map) {
  const grid = map?.grid ?? {};
  const width = Math.max(1, Math.min(512, Math.floor(number(grid.width, 16))));
  const height = Math.max(1, Math.min(512, Math.floor(number(grid.height, 12))));
  const background = map?.background ?? {};
  const drawing = map?.drawing ?? {};
  const list = (value) => (Array.isArray(value) ? value : []);
  // hoard.map/v2 paints the floor as rectangles over a palette; drawn as the tiles they cover (later over earlier).
  const tiles = list(background.tiles).slice();
  const palette = list(background.palette);
  for (const rect of list(background.rects)) {
    if (!Array.isArray(rect) || (rect.length !== 5 && rect.length !== 3)) continue;
    const [rx, ry, rw, rh, index] = (rect.length === 3 ? [rect[0], rect[1], 1, 1, rect[2]] : rect).map((n) => Math.floor(number(n, -2)));
    const texture = index === -1 ? background.texture : palette[index];
    if (!isDigest(texture)) continue;
    for (let y = Math.max(0, ry); y < Math.min(height, ry + rh); y++) {
      for (let x = Math.max(0, rx); x < Math.min(width, rx + rw); x++) tiles.push({x, y, texture});
    }
  }
  return {
    width, height, grid: gridOf(map),
    color: typeof background.color === 'string' && /^#[0-9a-fA-F]{6}$/.test(background.color) ? background.color : '#2b2a27',
    texture: background.texture,
    tiles, walls: list(drawing.walls), strokes: list(drawing.strokes), layers: drawing.layers ?? {},
    objects: list(map?.objects), tokens: list(map?.tokens),
    fog: fogOf(map?.fog, width, height),
    vision: visionOf(map?.vision, width, height),
  };
}

/**
 * Vision, when on: each participant's explored and seen tiles as a flag per tile (a participant's own map holds only
 * theirs, the host's everyone's). `viewer` on a world says whose to draw: unexplored dark, explored dim, seen lit.
 */
function visionOf(vision, width, height) {
  if (vision?.enabled !== true) return null;
  const flags = (entries) => Object.fromEntries(Object.entries(entries ?? {}).map(([id, rects]) => [id, fogOf({enabled: true, revealed: rects}, width, height)]));
  return {explored: flags(vision.explored), seen: flags(vision.seen)};
}

/** The fog as a flag per revealed tile (row by row), or null when the map has none or it is off. */
function fogOf(fog, width, height) {
  if (fog?.enabled !== true) return null;
  const revealed = new Uint8Array(width * height);
  for (const rect of Array.isArray(fog.revealed) ? fog.revealed : []) {
    if (!Array.isArray(rect) || rect.length !== 4) continue;
    const [rx, ry, rw, rh] = rect.map((n) => Math.floor(number(n, 0)));
    for (let y = Math.max(0, ry); y < Math.min(height, ry + rh); y++) {
      for (let x = Math.max(0, rx); x < Math.min(width, rx + rw); x++) revealed[y * width + x] = 1;
    }
  }
  return revealed;
}

/**
 * Draws `map` into `canvas`, sized to fit `maxWidth` × `maxHeight` CSS pixels. Returns a promise that settles when the best
 * variants are drawn; the first, smallest-variant drawing happens as soon as those pictures arrive.
 */
export async function drawMap(canvas, map, manifest, maxWidth, maxHeight = Infinity) {
  const world = layers(map);
  const resolve = resolver(manifest);
  const [across, down] = geometry(world).extent;
  const tile = Math.max(6, Math.min(96, Math.floor(Math.min(maxWidth / across, maxHeight / down))));
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.ceil(across * tile * ratio);
  canvas.height = Math.ceil(down * tile * ratio);
  canvas.style.width = `${Math.ceil(across * tile)}px`;
  canvas.style.height = `${Math.ceil(down * tile)}px`;
  const context = canvas.getContext('2d');
  const images = new Map();

  const references = new Set([world.texture, ...world.tiles.map((t) => t?.texture), ...world.walls.map((w) => w?.texture),
    ...world.objects.map((o) => o?.asset), ...world.tokens.map((t) => t?.asset)].filter(isDigest));

  let scheduled = false;
  const redraw = () => {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => { scheduled = false; paint(context, world, resolve, images, tile, ratio); });
  };
  redraw();

  const load = (reference, pick) => {
    const art = resolve(reference);
    if (!art) return Promise.resolve();
    const variant = pick(art);
    if (!variant || images.get(reference)?.digest === variant.digest) return Promise.resolve();
    return loadImage(variant.digest).then((image) => {
      const current = images.get(reference);
      if (!current || (current.width * current.height) < variant.width * variant.height || !variant.width) {
        images.set(reference, {digest: variant.digest, image, width: variant.width, height: variant.height});
        redraw();
      }
    }, () => {});
  };
  // Smallest variants first, every one of them, then what the screen can show.
  await Promise.all([...references].map((reference) => load(reference, (art) => art.variants[0])));
  await Promise.all([...references].map((reference) => load(reference, (art) => {
    const wanted = art.footprint.width * tile * ratio;
    return art.variants.find((variant) => variant.width >= wanted) ?? art.variants[art.variants.length - 1];
  })));
  return {references: references.size, drawn: images.size};
}

/** The floor drawn once per map change and zoom, by world (layers() makes a new one per change). */
const floors = new WeakMap();
/** The largest floor kept as a picture, in device pixels a side; a larger one is drawn cell by cell, on screen only. */
const FLOOR_CACHE_SIDE = 4096;

/**
 * Paints `world` (from layers()) with `tile` CSS pixels a tile, its top-left corner at `origin` (CSS pixels). The floor
 * (colour, textures, grid lines) is drawn into a picture of its own once per map change, zoom and sharper picture, so
 * a pan redraws one picture, not every cell; a floor too large for that is drawn for the cells on screen only.
 */
export function paint(context, world, resolve, images, tile, ratio, origin = [0, 0]) {
  const {width, height} = world;
  const cells = geometry(world);
  const [across, down] = cells.extent;
  context.setTransform(ratio, 0, 0, ratio, origin[0] * ratio, origin[1] * ratio);
  const picture = (reference) => images.get(reference)?.image;
  // What is on screen, in cells (a cell's margin around, for hexes and rounding).
  const screen = {
    x0: Math.floor(-origin[0] / tile) - 1, y0: Math.floor(-origin[1] / tile) - 1,
    x1: Math.ceil((context.canvas.width / ratio - origin[0]) / tile) + 1, y1: Math.ceil((context.canvas.height / ratio - origin[1]) / tile) + 1,
  };
  const pixels = [Math.ceil(across * tile * ratio), Math.ceil(down * tile * ratio)];
  if (pixels[0] <= FLOOR_CACHE_SIDE && pixels[1] <= FLOOR_CACHE_SIDE && typeof document !== 'undefined') {
    const signature = `${tile}|${ratio}|${[...images.values()].map((entry) => entry.digest).join(',')}`;
    let cached = floors.get(world);
    if (!cached || cached.signature !== signature) {
      const canvas = document.createElement('canvas');
      [canvas.width, canvas.height] = pixels;
      const layer = canvas.getContext('2d');
      layer.setTransform(ratio, 0, 0, ratio, 0, 0);
      paintFloor(layer, world, cells, picture, tile, {x0: 0, y0: 0, x1: width, y1: height});
      cached = {signature, canvas};
      floors.set(world, cached);
    }
    context.drawImage(cached.canvas, 0, 0, pixels[0] / ratio, pixels[1] / ratio);
  } else {
    paintFloor(context, world, cells, picture, tile, screen);
  }

  // Drawing: free strokes (tile units), then walls along grid lines, doors as a gap with a leaf.
  context.lineCap = 'round';
  context.lineJoin = 'round';
  for (const stroke of world.strokes) {
    const points = Array.isArray(stroke?.points) ? stroke.points : [];
    if (points.length < 2) continue;
    context.strokeStyle = typeof stroke.color === 'string' && /^#[0-9a-fA-F]{6}$/.test(stroke.color) ? stroke.color : '#c0392b';
    context.lineWidth = Math.max(1, number(stroke.width, 0.08) * tile);
    context.beginPath();
    points.forEach((point, index) => {
      const px = number(point?.[0]) * tile;
      const py = number(point?.[1]) * tile;
      if (index === 0) context.moveTo(px, py); else context.lineTo(px, py);
    });
    context.stroke();
  }
  for (const wall of world.walls) {
    // On squares from corner to corner; on hexes along a side of a cell.
    const ends = cells.hex && Array.isArray(wall?.cell)
      ? cells.edge(number(wall.cell[0]), number(wall.cell[1]), Math.floor(number(wall?.side)))
      : [[number(wall?.from?.[0]), number(wall?.from?.[1])], [number(wall?.to?.[0]), number(wall?.to?.[1])]];
    if (ends.length !== 2) continue;
    const [[x1, y1], [x2, y2]] = ends.map(([ux, uy]) => [ux * tile, uy * tile]);
    const image = picture(wall?.texture);
    context.lineWidth = Math.max(3, tile * 0.22);
    context.lineCap = 'square';
    context.strokeStyle = image ? context.createPattern(image, 'repeat') : '#1d1a17';
    if (wall?.door) {
      context.strokeStyle = '#8a5a2b';
      context.lineWidth = Math.max(2, tile * 0.14);
      // An open door is drawn as a dashed outline of where the leaf was.
      context.setLineDash(wall?.open === true ? [tile * 0.15, tile * 0.12] : []);
    }
    context.beginPath();
    context.moveTo(x1, y1);
    context.lineTo(x2, y2);
    context.stroke();
    context.setLineDash([]);
    if (image && !wall?.door) {
      context.strokeStyle = 'rgba(0, 0, 0, 0.55)';
      context.lineWidth = 1;
      context.stroke();
    }
  }

  // Objects, then tokens, each on its footprint; tokens carry their number.
  const place = (item, art) => {
    // An object may say the cells it covers (an uploaded battlemap has no footprint of its own).
    const own = item?.footprint;
    const footprint = Number.isInteger(own?.width) && Number.isInteger(own?.height) ? own : art.footprint;
    const box = cells.box(number(item?.x), number(item?.y), footprint);
    return {x: box.x * tile, y: box.y * tile, w: box.w * tile, h: box.h * tile};
  };
  const [left, top] = [-origin[0], -origin[1]];
  const [right, bottom] = [left + context.canvas.width / ratio, top + context.canvas.height / ratio];
  const offScreen = (box) => box.x + box.w < left || box.y + box.h < top || box.x > right || box.y > bottom;
  for (const object of world.objects) {
    const art = resolve(object?.asset);
    if (!art) continue;
    const box = place(object, art);
    if (offScreen(box)) continue;
    const image = picture(object.asset);
    context.save();
    context.translate(box.x + box.w / 2, box.y + box.h / 2);
    context.rotate((number(object.rotation) % 360) * Math.PI / 180);
    if (image) context.drawImage(image, -box.w / 2, -box.h / 2, box.w, box.h);
    else { context.fillStyle = 'rgba(138, 90, 43, 0.5)'; context.fillRect(-box.w / 2, -box.h / 2, box.w, box.h); }
    context.restore();
  }
  for (const token of world.tokens) {
    const art = resolve(token?.asset) ?? {footprint: {width: 1, height: 1}};
    const box = place(token, art);
    if (offScreen(box)) continue;
    const image = picture(token?.asset);
    // The host's page shows hidden tokens (players are never sent them) faint, with a dashed ring.
    const hidden = token?.hidden === true;
    context.save();
    if (hidden) context.globalAlpha = 0.45;
    context.beginPath();
    context.arc(box.x + box.w / 2, box.y + box.h / 2, Math.min(box.w, box.h) / 2 - 1, 0, Math.PI * 2);
    context.fillStyle = 'rgba(255, 255, 255, 0.25)';
    context.fill();
    if (image) { context.clip(); context.drawImage(image, box.x, box.y, box.w, box.h); }
    context.restore();
    context.save();
    context.lineWidth = Math.max(1.5, tile * 0.05);
    context.strokeStyle = hidden ? '#9aa3b5' : '#f3d98f';
    if (hidden) context.setLineDash([tile * 0.12, tile * 0.08]);
    context.beginPath();
    context.arc(box.x + box.w / 2, box.y + box.h / 2, Math.min(box.w, box.h) / 2 - 1, 0, Math.PI * 2);
    context.stroke();
    context.restore();
    if (Number.isInteger(token?.number)) {
      const radius = Math.max(7, tile * 0.2);
      const cx = box.x + box.w - radius * 0.8;
      const cy = box.y + radius * 0.8;
      context.beginPath();
      context.arc(cx, cy, radius, 0, Math.PI * 2);
      context.fillStyle = '#b3261e';
      context.fill();
      context.fillStyle = '#fff';
      context.font = `600 ${Math.round(radius * 1.2)}px system-ui, sans-serif`;
      context.textAlign = 'center';
      context.textBaseline = 'middle';
      context.fillText(String(token.number), cx, cy + 0.5);
    }
  }
  // Vision as one participant sees it: what they never explored is dark, what they do not see now dim.
  const explored = world.viewer !== undefined ? world.vision?.explored[world.viewer] : undefined;
  if (world.vision && world.viewer !== undefined) {
    const seen = world.vision.seen[world.viewer];
    const revealed = (i) => world.fog?.[i] === 1;
    for (const [fill, hides] of [['rgb(8, 9, 14)', (i) => !explored?.[i] && !revealed(i)], ['rgba(8, 9, 14, 0.55)', (i) => !seen?.[i] && !revealed(i)]]) {
      context.fillStyle = fill;
      context.beginPath();
      for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) if (hides(y * width + x)) cells.trace(context, x, y, tile);
      context.fill();
    }
  } else if (world.fog) {
    // Fog as the host sees it: what players do not see is darkened, not hidden.
    context.fillStyle = 'rgba(12, 14, 24, 0.6)';
    context.beginPath();
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) if (!world.fog[y * width + x]) cells.trace(context, x, y, tile);
    }
    context.fill();
  }
}

/** The floor of the cells in `range` (columns x0…x1, rows y0…y1): the colour, the textures, the grid lines. */
function paintFloor(context, world, cells, picture, tile, range) {
  const {width, height} = world;
  const [x0, y0] = [Math.max(0, range.x0), Math.max(0, range.y0)];
  const [x1, y1] = [Math.min(width, range.x1), Math.min(height, range.y1)];
  context.fillStyle = world.color;
  context.fillRect(0, 0, cells.extent[0] * tile, cells.extent[1] * tile);
  // A cell's picture fills its box: a square tile, or a hex's bounding box (hex art's transparent corners are
  // covered by its neighbours, as it was made to be drawn).
  const drawCell = (image, x, y) => {
    const [cx, cy] = cells.centre(x, y);
    context.drawImage(image, (cx - 0.5) * tile, (cy - 0.5) * tile, tile, tile);
  };
  // Background: the default texture in every tile, then the per-tile textures.
  const floor = picture(world.texture);
  if (floor) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) drawCell(floor, x, y);
  for (const cell of world.tiles) {
    const image = picture(cell?.texture);
    const x = Math.floor(number(cell?.x, -1));
    const y = Math.floor(number(cell?.y, -1));
    if (image && x >= x0 && y >= y0 && x < x1 && y < y1) drawCell(image, x, y);
  }
  context.strokeStyle = 'rgba(0, 0, 0, 0.18)';
  context.lineWidth = 1;
  context.beginPath();
  if (cells.hex) {
    if (tile >= 8) for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) cells.trace(context, x, y, tile);
  } else if (tile >= 3) {
    for (let x = x0; x <= x1; x++) { context.moveTo(x * tile + 0.5, y0 * tile); context.lineTo(x * tile + 0.5, y1 * tile); }
    for (let y = y0; y <= y1; y++) { context.moveTo(x0 * tile, y * tile + 0.5); context.lineTo(x1 * tile, y * tile + 0.5); }
  }
  context.stroke();
}
