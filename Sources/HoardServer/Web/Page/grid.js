// Where a map's cells are, for drawing and pointing: the page's copy of HoardCore's `Grid` (Grid.swift), in "tile
// units" (one unit is one cell's picture: a square tile, or a hex's bounding box as hex art such as Wesnoth's 72 × 72
// is drawn). Positions are (column, row) on both kinds; hexes go through cube coordinates (q, r, s = -q - r).

const SQUARE = {type: 'square'};

/** The grid a map document names (`grid.type`, `orientation`, `offset`); square when it names none it knows. */
export function gridOf(map) {
  const grid = map?.grid ?? {};
  if (grid.type !== 'hex') return SQUARE;
  return {type: 'hex', flat: grid.orientation !== 'pointy', odd: grid.offset !== 'even'};
}

const DIRECTIONS = [[1, 0], [0, 1], [-1, 1], [-1, 0], [0, -1], [1, -1]];

function cube(grid, x, y) {
  if (grid.flat) return [x, y - (grid.odd ? (x - (x & 1)) / 2 : (x + (x & 1)) / 2)];
  return [x - (grid.odd ? (y - (y & 1)) / 2 : (y + (y & 1)) / 2), y];
}

function offset(grid, q, r) {
  if (grid.flat) return [q, r + (grid.odd ? (q - (q & 1)) / 2 : (q + (q & 1)) / 2)];
  return [q + (grid.odd ? (r - (r & 1)) / 2 : (r + (r & 1)) / 2), r];
}

function rounded(q, r) {
  const s = -q - r;
  let [rq, rr, rs] = [Math.round(q), Math.round(r), Math.round(s)];
  const [dq, dr, ds] = [Math.abs(rq - q), Math.abs(rr - r), Math.abs(rs - s)];
  if (dq > dr && dq > ds) rq = -rr - rs; else if (dr > ds) rr = -rq - rs;
  return [rq, rr];
}

/** How far a hex token's picture reaches, in cells across, for sizes 1 to 4 (1, 3, 7 and 19 hexes). */
const HEX_SPAN = [1, 1.9, 2.7, 4.4];

/**
 * The geometry of `world` (from mapview's layers()): `extent` (the map's size in tile units), `centre(x, y)`,
 * `cellAt(ux, uy)` (the cell under a point, maybe off the map), `box(x, y, footprint)` (where art placed at (x, y) is
 * drawn), `neighbours(x, y)` (the cells a fill spreads to: four on squares, six on hexes), `trace(context, x, y, t)` (a cell's outline as a path, `t` CSS pixels a unit) and, on hexes,
 * `edge(x, y, side)` (a side's two ends).
 */
export function geometry(world) {
  const grid = world.grid ?? SQUARE;
  const {width, height} = world;
  if (grid.type !== 'hex') {
    return {
      hex: false,
      extent: [width, height],
      centre: (x, y) => [x + 0.5, y + 0.5],
      cellAt: (ux, uy) => [Math.floor(ux), Math.floor(uy)],
      neighbours: (x, y) => [[x + 1, y], [x - 1, y], [x, y + 1], [x, y - 1]],
      box: (x, y, footprint) => ({x, y, w: footprint.width, h: footprint.height}),
      trace: (context, x, y, t) => context.rect(x * t, y * t, t, t),
    };
  }
  // Cell (0, 0)'s box starts at the origin; the even layouts push it half a cell so nothing starts before it.
  const origin = grid.flat ? [0.5, grid.odd ? 0.5 : 1] : [grid.odd ? 0.5 : 1, 0.5];
  const centre = (x, y) => {
    const [q, r] = cube(grid, x, y);
    return grid.flat ? [origin[0] + 0.75 * q, origin[1] + r + q / 2] : [origin[0] + q + r / 2, origin[1] + 0.75 * r];
  };
  const cellAt = (ux, uy) => {
    const [px, py] = [ux - origin[0], uy - origin[1]];
    if (grid.flat) { const q = px / 0.75; return offset(grid, ...rounded(q, py - q / 2)); }
    const r = py / 0.75;
    return offset(grid, ...rounded(px - r / 2, r));
  };
  const corners = grid.flat
    ? [[0.5, 0], [0.25, 0.5], [-0.25, 0.5], [-0.5, 0], [-0.25, -0.5], [0.25, -0.5]]
    : [[0, -0.5], [0.5, -0.25], [0.5, 0.25], [0, 0.5], [-0.5, 0.25], [-0.5, -0.25]];
  const extent = grid.flat
    ? [0.75 * width + 0.25, height + (width > 1 ? 0.5 : 0)]
    : [width + (height > 1 ? 0.5 : 0), 0.75 * height + 0.25];
  return {
    hex: true,
    extent,
    centre,
    cellAt,
    neighbours: (x, y) => {
      const [q, r] = cube(grid, x, y);
      return DIRECTIONS.map(([dq, dr]) => offset(grid, q + dq, r + dr));
    },
    box: (x, y, footprint) => {
      const size = Math.max(1, Math.min(4, Math.floor(footprint?.width ?? 1)));
      let [cx, cy] = centre(x, y);
      if (size === 2) {
        // The anchor and the two hexes beside and below it: drawn over the corner they share.
        const [q, r] = cube(grid, x, y);
        const cells = [[q, r], [q + DIRECTIONS[0][0], r + DIRECTIONS[0][1]], [q + DIRECTIONS[1][0], r + DIRECTIONS[1][1]]]
          .map(([cq, cr]) => centre(...offset(grid, cq, cr)));
        [cx, cy] = [cells.reduce((sum, c) => sum + c[0], 0) / 3, cells.reduce((sum, c) => sum + c[1], 0) / 3];
      }
      const span = HEX_SPAN[size - 1];
      return {x: cx - span / 2, y: cy - span / 2, w: span, h: span};
    },
    /** The two ends of side `side` (0 to 5) of cell (x, y): the corners it shares with the hex across that side. */
    edge: (x, y, side) => {
      const [q, r] = cube(grid, x, y);
      const [dq, dr] = DIRECTIONS[Math.max(0, Math.min(5, side))];
      const ends = (cx, cy) => corners.map(([dx, dy]) => [cx + dx, cy + dy]);
      const mine = ends(...centre(x, y));
      const theirs = ends(...centre(...offset(grid, q + dq, r + dr)));
      return mine.filter(([ax, ay]) => theirs.some(([bx, by]) => Math.abs(ax - bx) < 1e-6 && Math.abs(ay - by) < 1e-6));
    },
    trace: (context, x, y, t) => {
      const [cx, cy] = centre(x, y);
      corners.forEach(([dx, dy], index) => {
        const [px, py] = [(cx + dx) * t, (cy + dy) * t];
        if (index === 0) context.moveTo(px, py); else context.lineTo(px, py);
      });
      context.closePath();
    },
  };
}
