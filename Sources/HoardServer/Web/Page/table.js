// The live table: the session's map on a canvas that pans and zooms, kept current by the live channel, and what a
// player does at it (drag their token, ping, draw on their layer, talk). Hands are read by gestures.js; the host's
// extra controls are in host.js.
//
// Drawing reuses mapview.js's painter; pictures come through blobs.js, every asset's preview (else its smallest
// variant) first, then, as the player zooms in, the smallest variant at least as wide as the asset on screen.
import {blobLoader} from './blobs.js';
import {diceBox} from './dice.js';
import {h, replace, toast} from './dom.js';
import {LiveChannel} from './live.js';
import {geometry} from './grid.js';
import {layers, paint, resolver} from './mapview.js';
import {applyOp, artOf} from './tablestate.js';
import {attachGestures, zoomLimits} from './gestures.js';
import {TableSound, applyAudioOp, applyHeard, jukebox, playableSound} from './sound.js';

const PING_MS = 2000;


/**
 * Opens the table of session `sessionId` with `token` in `main`. `seat`: {participantId, isHost}.
 * `request(path, options)`: the API with this token (api.js's, or the participant's).
 */
/** The display name the host chose for their tables (kept in this browser), or undefined: then they are "Host". */
export function hostName() {
  return localStorage.getItem('hoard.hostName') || undefined;
}

export async function openTable(main, {sessionId, token, seat, request, onLeave}) {
  const loader = blobLoader(token);  // first: opening the Cache Storage overlaps the session's request
  const session = await request(`/v1/sessions/${encodeURIComponent(sessionId)}`);
  performance.mark('hoard:session');
  const me = seat.participantId ?? session.you?.participantId ?? null;
  const isHost = seat.isHost ?? session.you?.host === true;
  const state = {
    map: session.map, manifest: {assets: [], blobs: []}, seq: session.seq, mapDigest: session.mapDigest,
    people: new Map(), pings: [], selected: null, drag: null, stroke: null, tool: 'move', colour: '#e2483d',
  };
  const images = new Map();   // reference → {digest, image, width}
  let world = layers(state.map);
  let resolve = resolver(state.manifest);

  // The host by the display name their table gave (never a token's label), connected or not from the first paint.
  const hostId = session.hostSeat?.id ?? `host:${session.host}`;
  const hostLabel = (name) => (name && name !== 'Host' ? `${name} (host)` : 'The host');
  state.people.set(hostId, {name: hostLabel(session.hostSeat?.name), online: session.hostSeat?.connected === 'yes'});
  for (const person of session.participants ?? []) state.people.set(person.id, {name: person.name, online: person.connected === 'yes'});
  const nameOf = (id) => state.people.get(id)?.name ?? (typeof id === 'string' && id.startsWith('host:') ? 'the host' : 'someone');
  // Someone who left is shown away, then leaves the list and the "send to" menu after the server's grace period
  // (awaySeconds), unless they come back meanwhile. The host stays, away or not.
  const awayMs = (session.awaySeconds ?? 60) * 1000;
  const away = new Map();  // participant id → timer
  const goneLater = (id) => {
    clearTimeout(away.get(id));
    if (id === hostId || id === me) return;
    away.set(id, setTimeout(() => {
      away.delete(id);
      if (state.people.get(id)?.online === false) { state.people.delete(id); showPresence(); }
    }, awayMs));
  };

  // The page.
  const canvas = h('canvas', {id: 'table-canvas', class: 'table-canvas', role: 'img', 'aria-label': `The table of ${session.name}`, tabindex: '0'});
  const frame = h('div', {class: 'table-frame'}, canvas);
  const liveStatus = h('span', {id: 'live-status', class: 'live-status', role: 'status'}, 'Connecting…');
  const status = h('p', {id: 'table-status', class: 'table-status', role: 'alert'});
  const presence = h('ul', {id: 'presence', class: 'people presence'});
  const messages = h('ol', {id: 'messages', class: 'messages'});
  const toSelect = h('select', {id: 'message-to', 'aria-label': 'Send to'});
  const text = h('input', {id: 'message-text', type: 'text', maxlength: '2000', placeholder: 'Say something…', autocomplete: 'off', required: true, 'aria-label': 'Message'});
  const messageForm = h('form', {id: 'message-form', class: 'message-form'}, toSelect, text, h('button', {type: 'submit', class: 'primary'}, 'Send'));
  // Dice: the table's choices, this seat's in the map (`dice`), kept for next time as a member's ref `dice` or in a
  // player's browser; faces drawn with the roller's dice picture (its smallest variant).
  const isMember = typeof me === 'string' && me.startsWith('host:');
  const kept = isMember
    // Read from the list: a member who never chose has no `dice` ref, and a 404 would be an error in the console.
    ? {get: () => request('/v1/refs').then(({refs}) => refs.find((ref) => ref.name === 'dice')?.digest ?? null, () => null),
      set: (digest) => request('/v1/refs/dice', digest ? {method: 'PUT', json: {digest}} : {method: 'DELETE'}).catch(() => {})}
    : {get: async () => localStorage.getItem('hoard.dice'),
      set: async (digest) => (digest ? localStorage.setItem('hoard.dice', digest) : localStorage.removeItem('hoard.dice'))};
  const dice = diceBox({
    send: (op) => live.send(op), refused: (what) => refused(what), messages, nameOf, dice: session.dice,
    own: {
      choices: () => request(`/v1/sessions/${encodeURIComponent(sessionId)}/dice/choices`).then((answer) => answer.dice),
      chosen: () => state.map?.dice?.[me] ?? null,
      picture: (digest) => {
        const variant = resolve(digest)?.variants?.[0];
        return variant ? loader.picture(variant) : Promise.reject(new Error('no picture yet'));
      },
      kept,
      statistics: () => request(`/v1/sessions/${encodeURIComponent(sessionId)}/dice/statistics`),
    },
  });
  const tools = ['move', 'ping', 'draw'].map((tool) => h('button', {type: 'button', class: 'tool', dataset: {tool}, 'aria-pressed': String(tool === state.tool)},
    {move: 'Move', ping: 'Ping', draw: 'Draw'}[tool]));
  const colour = h('input', {type: 'color', id: 'draw-colour', value: state.colour, 'aria-label': 'Drawing colour'});
  const clear = h('button', {type: 'button', id: 'clear-drawing', class: 'ghost'}, 'Clear my drawing');
  const leave = h('button', {type: 'button', id: 'leave-table', class: 'ghost'}, isHost ? 'Close' : 'Leave');
  const soundBox = h('div', {id: 'sound-box', class: 'sound-box'});
  let sound = null;
  const side = h('aside', {class: 'table-side card'},
    soundBox, isHost ? jukebox({request, send: (op) => live.send(op), refused: (what) => refused(what)}) : null,
    h('h3', {}, 'At the table'), presence,
    h('h3', {}, 'Messages'), messages, messageForm, h('h3', {}, 'Dice'), dice.element);
  replace(main, h('section', {class: 'table-view'},
    h('div', {class: 'table-head'}, h('h1', {class: 'session-name'}, session.name), liveStatus, leave),
    h('div', {class: 'table-tools'}, tools, colour, clear),
    h('div', {class: 'table-body'}, h('div', {class: 'table-column'}, frame, status), side)));

  // The view: `tile` CSS pixels a tile, the map's top-left corner at (x, y) in the canvas.
  const view = {tile: 32, x: 0, y: 0, ratio: window.devicePixelRatio || 1};
  const fit = () => {
    const width = frame.clientWidth || 600;
    const height = frame.clientHeight || 400;
    const [across, down] = geometry(world).extent;
    view.tile = Math.max(zoomLimits.min, Math.min(96, Math.min(width / across, height / down)));
    view.x = (width - across * view.tile) / 2;
    view.y = (height - down * view.tile) / 2;
  };
  const size = () => {
    view.ratio = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(frame.clientWidth * view.ratio));
    canvas.height = Math.max(1, Math.round(frame.clientHeight * view.ratio));
    render();
  };

  // Pictures: smallest variants of everything first, then sharper ones for what the zoom needs.
  let drawnAt = null;
  const load = (reference, pick) => {
    const art = resolve(reference);
    const variant = art && pick(art);
    if (!variant || (images.get(reference)?.width ?? -1) >= (variant.width || 0) && images.has(reference)) return Promise.resolve();
    return loader.picture({...variant, mediaType: variant.mediaType}).then((image) => {
      const current = images.get(reference);
      if (!current || current.width < variant.width || !variant.width) {
        images.set(reference, {digest: variant.digest, image, width: variant.width});
        renderSoon();
      }
    }, () => {});
  };
  const loadSmallest = async () => {
    const references = [...artOf(state.map)];
    await Promise.all(references.map((reference) => load(reference, (art) => art.variants[0])));
    if (drawnAt === null) {
      draw();
      drawnAt = performance.now();
      performance.mark('hoard:drawn');
      canvas.dataset.firstDrawMs = String(Math.round(drawnAt));
    }
    canvas.dataset.drawn = String(references.filter((r) => images.has(r)).length);
    canvas.dataset.references = String(references.length);
  };
  let sharpenTimer = 0;
  const sharpen = () => {
    clearTimeout(sharpenTimer);
    sharpenTimer = setTimeout(() => {
      for (const reference of artOf(state.map)) {
        load(reference, (art) => {
          const wanted = art.footprint.width * view.tile * view.ratio;
          return art.variants.find((variant) => variant.width >= wanted) ?? art.variants[art.variants.length - 1];
        });
      }
    }, 150);
  };
  const manifestChanged = () => { resolve = resolver(state.manifest); };
  const mergeManifest = (entries) => {
    const assets = new Map(state.manifest.assets.map((a) => [a.digest, a]));
    for (const asset of entries.assets ?? []) assets.set(asset.digest, asset);
    const blobs = new Map(state.manifest.blobs.map((b) => [b.digest, b]));
    for (const blob of entries.blobs ?? []) blobs.set(blob.digest, blob);
    state.manifest = {assets: [...assets.values()], blobs: [...blobs.values()]};
    manifestChanged();
  };
  mergeManifest(session.manifest ?? {});
  const mapChanged = () => {
    world = layers(state.map);
    canvas.dataset.tokens = String(world.tokens.length);
    canvas.dataset.seq = String(state.seq);
    render();
  };

  // Painting.
  let scheduled = false;
  let soon = 0;
  function render() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => { scheduled = false; draw(); });
  }
  // As pictures arrive: a frame every 100 ms at most, not one per picture (a frame paints the whole table).
  const renderSoon = () => { if (!soon) soon = setTimeout(() => { soon = 0; render(); }, 100); };
  function draw() {
    const context = canvas.getContext('2d');
    context.setTransform(1, 0, 0, 1, 0, 0);
    context.fillStyle = '#14161c';
    context.fillRect(0, 0, canvas.width, canvas.height);
    // The host may see the table as a player would (editor.js's "see the table as").
    // A player's own view is drawn with their vision: unexplored dark, explored dim, seen lit.
    const shown = state.viewFilter ? state.viewFilter(world) : isHost ? world : {...world, viewer: me};
    paint(context, shown, resolve, images, view.tile, view.ratio, [view.x, view.y]);
    const t = view.tile;
    state.overlay?.(context, t);
    const cells = geometry(world);
    const centre = (token) => {
      const art = resolve(token.asset) ?? {footprint: {width: 1, height: 1}};
      const box = cells.box(token.x, token.y, art.footprint);
      return {x: (box.x + box.w / 2) * t, y: (box.y + box.h / 2) * t, r: Math.min(box.w, box.h) * t / 2};
    };
    if (state.selected) {
      const token = world.tokens.find((candidate) => candidate?.id === state.selected);
      if (token) {
        const c = centre(token);
        context.strokeStyle = '#5ab0ff';
        context.lineWidth = Math.max(2, t * 0.08);
        context.beginPath(); context.arc(c.x, c.y, c.r + 2, 0, Math.PI * 2); context.stroke();
      }
    }
    if (state.drag?.moved && state.drag.token) {
      const art = resolve(state.drag.token.asset) ?? {footprint: {width: 1, height: 1}};
      const image = images.get(state.drag.token.asset)?.image;
      context.globalAlpha = 0.65;
      const box = cells.box(state.drag.tile[0], state.drag.tile[1], art.footprint);
      const [x, y, w, hgt] = [box.x * t, box.y * t, box.w * t, box.h * t];
      if (image) context.drawImage(image, x, y, w, hgt); else { context.fillStyle = '#f3d98f'; context.fillRect(x, y, w, hgt); }
      context.globalAlpha = 1;
    }
    if (state.stroke && state.stroke.points.length > 1) {
      context.strokeStyle = state.stroke.color;
      context.lineWidth = Math.max(1, state.stroke.width * t);
      context.beginPath();
      state.stroke.points.forEach(([px, py], i) => (i ? context.lineTo(px * t, py * t) : context.moveTo(px * t, py * t)));
      context.stroke();
    }
    const now = performance.now();
    state.pings = state.pings.filter((ping) => now - ping.at < PING_MS);
    for (const ping of state.pings) {
      const age = (now - ping.at) / PING_MS;
      context.strokeStyle = `rgba(255, 214, 10, ${1 - age})`;
      context.lineWidth = 3;
      context.beginPath(); context.arc(ping.x * t, ping.y * t, t * (0.3 + age * 1.2), 0, Math.PI * 2); context.stroke();
    }
    if (state.pings.length) render();
  }

  // The live channel.
  const setStatus = (message, kind = 'error') => {
    status.textContent = message;
    status.className = `table-status ${kind}`;
  };
  const refused = (what) => (error) => {
    setStatus(`The table refused ${what}: ${error.message}${error.code ? ` (${error.code})` : ''}`);
    toast(`Refused: ${error.message}`, 'error');
  };
  const addMessage = (from, op) => {
    const to = Array.isArray(op.to) ? ` → ${op.to.map((id) => (id === 'host' ? 'the host' : nameOf(id))).join(', ')}` : '';
    messages.appendChild(h('li', {class: op.to ? 'private' : ''}, h('strong', {}, `${nameOf(from)}${to}: `), op.text));
    messages.scrollTop = messages.scrollHeight;
  };
  const showPresence = () => {
    replace(presence, [...state.people].map(([id, person]) => h('li', {class: person.online ? 'online' : 'away', dataset: {id}},
      person.name, id === me ? ' (you)' : '', person.online ? '' : ' · away')));
    replace(toSelect, h('option', {value: ''}, 'Everyone'), isHost ? null : h('option', {value: 'host'}, 'The host only'),
      [...state.people].filter(([id]) => id !== me && !id.startsWith('host:')).map(([id, person]) => h('option', {value: id}, `${person.name} only`)));
  };
  showPresence();
  for (const [id, person] of state.people) if (!person.online) goneLater(id);
  const snapshot = async (event) => {
    state.map = event.map;
    state.mapDigest = event.mapDigest;
    sound?.update(state.map?.audio);
    const known = new Set(state.manifest.assets.map((a) => a.digest).concat(state.manifest.blobs.map((b) => b.digest)));
    // A snapshot carries no manifest: ask for the session's when it draws art this page has no entry for.
    if ([...artOf(state.map)].some((digest) => !known.has(digest))) mergeManifest((await request(`/v1/sessions/${encodeURIComponent(sessionId)}`)).manifest ?? {});
    mapChanged();
    loadSmallest().then(sharpen);
  };
  const handle = (event) => {
    if (Number.isInteger(event.seq)) state.seq = event.seq;
    if (event.audio && state.map && event.type !== 'snapshot' && event.type !== 'map') {
      applyHeard(state.map, event.audio);
      sound?.update(state.map.audio);
    }
    // Whoever acts is here (the host may have come before this page did, with no presence event to tell).
    const actor = state.people.get(event.from);
    if (actor && !actor.online && event.type !== 'presence') { actor.online = true; clearTimeout(away.get(event.from)); showPresence(); }
    switch (event.type) {
    case 'op':
      if (['play', 'pause', 'stop', 'volume'].includes(event.op?.kind)) {
        applyAudioOp(state.map, event.op);
        sound?.update(state.map.audio);
        break;
      }
      if (event.op?.kind === 'message') addMessage(event.from, event.op);
      else if (event.op?.kind === 'seen') toast(`${(event.op.by ?? []).map(nameOf).join(', ')} saw your token`);
      else {
        applyOp(state.map, event.op, me);
        if (['add', 'reveal', 'view'].includes(event.op?.kind)) loadSmallest().then(sharpen);
        main.dispatchEvent(new CustomEvent('table:op', {detail: event.op}));
      }
      mapChanged();
      break;
    case 'assets':
      mergeManifest(event);
      break;
    case 'time':
      sound?.onTime(event);
      break;
    case 'rolled':
    case 'revealed':
      dice.handle(event);
      break;
    case 'snapshot':
      snapshot(event);
      break;
    case 'map':
      mergeManifest(event);
      snapshot(event);
      break;
    case 'presence': {
      const id = event.participant?.id;
      if (!id) break;
      state.people.set(id, {name: event.participant.name ?? nameOf(id), online: event.event === 'joined'});
      if (id === hostId) state.people.get(id).name = hostLabel(event.participant.name);
      if (event.event === 'joined') clearTimeout(away.get(id)); else goneLater(id);
      showPresence();
      break;
    }
    case 'ping':
      if (event.op) state.pings.push({x: event.op.x, y: event.op.y, at: performance.now(), from: event.from});
      canvas.dataset.pings = String(Number(canvas.dataset.pings ?? 0) + 1);
      render();
      break;
    case 'error':
      if (!event.opId) setStatus(`The server says: ${event.message}`);
      break;
    default:
      break;
    }
    canvas.dataset.seq = String(state.seq);
  };
  const live = new LiveChannel({
    sessionId, token, since: state.seq, onEvent: handle, name: isHost ? hostName() : undefined,
    onStatus: (now, detail) => {
      document.body.dataset.live = now;
      liveStatus.className = `live-status ${now}`;
      liveStatus.textContent = now === 'connected' ? 'Live' : now === 'reconnecting' ? `Reconnecting… (${detail})`
        : detail ? `Left the table: ${detail}` : 'Left the table';
      if (now === 'connected') sound?.probe();
      if (now === 'connected' && me) {
        const person = state.people.get(me);
        if (person) { person.online = true; showPresence(); }
      }
    },
  });

  // Pointer, wheel and pinch.
  const tileAt = attachGestures(canvas, {
    view, state, isHost, me, render, sharpen,
    get world() { return world; },
    get resolve() { return resolve; },
    send: (op, what) => live.send(op).catch(refused(what)),
    moving: () => setStatus(''),
    select: (token) => { state.selected = token.id; main.dispatchEvent(new CustomEvent('table:select', {detail: token})); },
  });

  for (const button of tools) {
    button.addEventListener('click', () => {
      state.tool = button.dataset.tool;
      for (const other of tools) other.setAttribute('aria-pressed', String(other === button));
      canvas.dataset.tool = state.tool;
    });
  }
  colour.addEventListener('input', () => { state.colour = colour.value; });
  clear.addEventListener('click', () => {
    const mine = (state.map?.drawing?.strokes ?? []).filter((stroke) => (isHost ? !stroke.layer : stroke.layer === `p:${me}`));
    for (const stroke of mine) live.send({kind: 'erase', stroke: stroke.id}).catch(refused('the eraser'));
  });
  messageForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const op = {kind: 'message', text: text.value.trim()};
    if (!op.text) return;
    if (toSelect.value) op.to = [toSelect.value];
    live.send(op).then(() => { text.value = ''; }, refused('the message'));
  });
  // A track is an audio asset: its sound (or the compatible rendition where this browser cannot play it), fetched
  // whole with this seat's token (the blob is immutable).
  const soundURL = async (track) => {
    const asset = state.manifest.assets.find((a) => a.digest === track);
    const digest = playableSound(asset)?.digest ?? track;
    const response = await fetch(`/v1/blobs/${digest}`, {headers: {Authorization: `Bearer ${token}`}, credentials: 'omit'});
    if (!response.ok) throw new Error(`the server answered ${response.status} for ${digest}`);
    return URL.createObjectURL(await response.blob());
  };
  sound = new TableSound({live, soundURL, container: soundBox});
  sound.update(state.map?.audio);
  leave.addEventListener('click', () => { sound.close(); live.close(); onLeave?.(); });

  new ResizeObserver(size).observe(frame);
  fit();
  size();
  mapChanged();
  loadSmallest().then(sharpen);

  const table = {
    session, state, view, live, loader, isHost, me, sound, send: (op) => live.send(op), refused, setStatus, render, mapChanged,
    mergeManifest,
    /** Draws the table now, not at the next frame (benchmarks time one frame's work with it). */
    drawNow: () => draw(),
    /** Where tile (x, y)'s centre is, in the page's client coordinates (tests and tools aim with it). */
    clientPoint(x, y) {
      const box = canvas.getBoundingClientRect();
      const [cx, cy] = geometry(world).centre(x, y);
      return [box.left + view.x + cx * view.tile, box.top + view.y + cy * view.tile];
    },
    tokens: () => world.tokens,
    centreTile: () => tileAt([canvas.clientWidth / 2, canvas.clientHeight / 2]).map(Math.floor),
  };
  return table;
}
