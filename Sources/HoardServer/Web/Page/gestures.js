// How the table answers hands: a wheel or a pinch zooms about the pointer, a drag on the floor pans, a drag on a token
// asks the server to move it (the table moves when the server's `op` comes back, so a refusal leaves it in place),
// and the ping and draw tools point and draw. `table` lends the view, the page's state and how to send an op.
import {geometry} from './grid.js';
import {newId} from './tablestate.js';

/** The farthest and closest zoom, in CSS pixels a tile. */
export const zoomLimits = {min: 4, max: 400};

/** Listens on `canvas`; returns tileAt(point): the tile coordinates (fractional) of a point in the canvas. */
export function attachGestures(canvas, table) {
  const {view, state, isHost, me, render, sharpen} = table;
  const world = () => table.world;
  const resolve = () => table.resolve;
  const pointers = new Map();
  let pinch = null;
  const local = (event) => {
    const box = canvas.getBoundingClientRect();
    return [event.clientX - box.left, event.clientY - box.top];
  };
  const tileAt = ([px, py]) => [(px - view.x) / view.tile, (py - view.y) / view.tile];
  const tokenAt = (point) => {
    const [tx, ty] = tileAt(point);
    const cells = geometry(world());
    for (let i = world().tokens.length - 1; i >= 0; i--) {
      const token = world().tokens[i];
      const art = resolve()(token?.asset) ?? {footprint: {width: 1, height: 1}};
      const box = cells.box(token.x, token.y, art.footprint);
      if (tx >= box.x && ty >= box.y && tx < box.x + box.w && ty < box.y + box.h) return token;
    }
    return null;
  };
  const zoomAt = ([px, py], factor) => {
    const tile = Math.max(zoomLimits.min, Math.min(zoomLimits.max, view.tile * factor));
    view.x = px - (px - view.x) * (tile / view.tile);
    view.y = py - (py - view.y) * (tile / view.tile);
    view.tile = tile;
    canvas.dataset.tile = String(Math.round(tile));
    render();
    sharpen();
  };
  canvas.addEventListener('wheel', (event) => {
    event.preventDefault();
    zoomAt(local(event), Math.exp(-event.deltaY * 0.0015));
  }, {passive: false});
  canvas.addEventListener('pointerdown', (event) => {
    canvas.setPointerCapture(event.pointerId);
    const point = local(event);
    pointers.set(event.pointerId, point);
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = {distance: Math.hypot(a[0] - b[0], a[1] - b[1]), tile: view.tile};
      state.drag = null; state.stroke = null;
      return;
    }
    if (state.editor?.handles(state.tool)) {
      // A building tool (editor.js) takes the pointer until it is let go.
      state.building = true;
      state.editor.down(tileAt(point));
      render();
      return;
    }
    if (state.tool === 'ping') {
      const [x, y] = tileAt(point);
      table.send({kind: 'ping', x: Math.max(0, Math.min(world().width, x)), y: Math.max(0, Math.min(world().height, y))}, 'the ping');
      return;
    }
    if (state.tool === 'draw') {
      state.stroke = {id: newId('s'), color: state.colour, width: 0.08, points: [tileAt(point)]};
      if (!isHost && me) state.stroke.layer = `p:${me}`;
      return;
    }
    const token = tokenAt(point);
    state.drag = token ? {token, start: point, tile: [token.x, token.y], moved: false} : {pan: true, start: point, origin: [view.x, view.y]};
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!pointers.has(event.pointerId)) return;
    const point = local(event);
    pointers.set(event.pointerId, point);
    if (pinch && pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const factor = (pinch.tile * Math.hypot(a[0] - b[0], a[1] - b[1]) / pinch.distance) / view.tile;
      zoomAt([(a[0] + b[0]) / 2, (a[1] + b[1]) / 2], factor);
      return;
    }
    if (state.building) {
      state.editor.move(tileAt(point));
      render();
      return;
    }
    if (state.stroke) {
      const [x, y] = tileAt(point);
      const last = state.stroke.points[state.stroke.points.length - 1];
      if (Math.hypot(x - last[0], y - last[1]) > 0.05 && state.stroke.points.length < 10000) state.stroke.points.push([x, y]);
      render();
      return;
    }
    const drag = state.drag;
    if (!drag) return;
    if (Math.hypot(point[0] - drag.start[0], point[1] - drag.start[1]) > 4) drag.moved = true;
    if (drag.pan) {
      view.x = drag.origin[0] + point[0] - drag.start[0];
      view.y = drag.origin[1] + point[1] - drag.start[1];
    } else if (drag.moved) {
      const [tx, ty] = tileAt(point);
      const art = resolve()(drag.token.asset) ?? {footprint: {width: 1, height: 1}};
      const cells = geometry(world());
      if (cells.hex) {
        // The hex under the pointer (a hex token is placed by its centre cell), kept on the map.
        const [cx, cy] = cells.cellAt(tx, ty);
        drag.tile = [Math.max(0, Math.min(world().width - 1, cx)), Math.max(0, Math.min(world().height - 1, cy))];
      } else {
        drag.tile = [Math.max(0, Math.min(world().width - art.footprint.width, Math.floor(tx - art.footprint.width / 2 + 0.5))),
          Math.max(0, Math.min(world().height - art.footprint.height, Math.floor(ty - art.footprint.height / 2 + 0.5)))];
      }
    }
    render();
  });
  const release = (event) => {
    pointers.delete(event.pointerId);
    if (pinch) { if (pointers.size < 2) pinch = null; return; }
    if (state.building) {
      state.building = false;
      state.editor.up(tileAt(local(event)));
      render();
      return;
    }
    if (state.stroke) {
      const stroke = state.stroke;
      state.stroke = null;
      const clamp = ([x, y]) => [Math.max(0, Math.min(world().width, x)), Math.max(0, Math.min(world().height, y))];
      stroke.points = stroke.points.map(clamp).map(([x, y]) => [Math.round(x * 100) / 100, Math.round(y * 100) / 100]);
      if (stroke.points.length === 1) stroke.points.push([stroke.points[0][0] + 0.01, stroke.points[0][1]]);
      table.send({kind: 'stroke', stroke}, 'the drawing');
      render();
      return;
    }
    const drag = state.drag;
    state.drag = null;
    if (!drag || drag.pan) { render(); return; }
    if (!drag.moved) {
      table.select(drag.token);
    } else if (drag.tile[0] !== drag.token.x || drag.tile[1] !== drag.token.y) {
      const [x, y] = drag.tile;
      table.moving();
      table.send({kind: 'move', token: drag.token.id, x, y}, `the move of ${drag.token.label ?? `token ${drag.token.number ?? ''}`}`);
    }
    render();
  };
  canvas.addEventListener('pointerup', release);
  canvas.addEventListener('pointercancel', release);

  return tileAt;
}
