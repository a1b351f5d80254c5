// Browse: filters that work together (search, kind, footprint, grid, pack; all in the URL, with counts), a grid of
// thumbnails sized for the screen that grows as it is scrolled, and the list and its place kept while an asset is
// opened.
import {api, batchedPictureURL, pictureFor, pictures, pictureURL, query} from './api.js';
import {bytes, h, plural, replace, toast} from './dom.js';
import {renditionProgress} from './renditions.js';
import {playableSound} from './sound.js';

const KINDS = ['token', 'object', 'texture', 'wall', 'background', 'dice', 'audio'];
const PAGE = 250;
/** Tile sizes, as Foundry's file picker offers them: a list, and tiles of three widths (CSS pixels). */
const SIZES = {list: 'List', small: 'Small tiles', medium: 'Tiles', large: 'Large tiles'};
const SIZE_KEY = 'hoard.tiles';
/** Footprints offered as filters at most (the most common first). */
const FOOTPRINTS = 8;
/** A picture at most this many pixels a side comes in a batch with its neighbours; larger ones on their own. */
const BATCHED_SIDE = 640;
/** The next page is asked for when the end of the grid is this many pixels below the screen. */
const NEAR_END = 1200;

/** The grid as last shown, so coming back from an asset shows the same tiles at the same place. */
let kept = null;

/** Forgets the kept grid (after an upload or a pack's deletion the listing has changed). */
export function forgetBrowse() {
  kept = null;
}

const wanted = new WeakMap();

/** Pictures are fetched when they come within a screen of being seen, at the size the tile has in device pixels. */
const observer = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    const img = entry.target;
    observer.unobserve(img);
    const asset = wanted.get(img);
    const devicePixels = Math.ceil((entry.boundingClientRect.width || 150) * (window.devicePixelRatio || 1));
    const picture = asset && pictureFor(asset, devicePixels);
    if (!picture) continue;
    img.dataset.digest = picture.digest;
    img.dataset.side = String(Math.max(picture.width, picture.height));
    img.dataset.largest = String(Math.max(...pictures(asset).map((p) => Math.max(p.width, p.height))));
    const url = Math.max(picture.width, picture.height) <= BATCHED_SIDE
      ? batchedPictureURL(picture.digest, picture.mediaType) : pictureURL(picture.digest);
    url.then((u) => { img.src = u; }, () => img.classList.add('broken'));
  }
}, {rootMargin: '100% 0px'});

/** The one sound playing from a tile's button, so starting another stops it. */
let playing = null;

/** A sound's tile face: a note and a button that plays it (fetched on the first click) or stops it. */
function soundFace(asset) {
  const sound = asset.variants?.[0];
  const type = (sound?.mediaType ?? '').replace('audio/', '').replace('mpeg', 'mp3').replace('mp4', 'm4a').toUpperCase();
  const button = h('button', {type: 'button', class: 'ghost small play-sound', 'aria-label': `Play ${asset.name}`}, '▶');
  button.addEventListener('click', async (event) => {
    event.preventDefault();
    event.stopPropagation();
    if (playing?.button === button) {
      playing.audio.pause();
      playing = null;
      button.textContent = '▶';
      return;
    }
    if (playing) {
      playing.audio.pause();
      playing.button.textContent = '▶';
    }
    try {
      const audio = new Audio(await pictureURL(playableSound(asset).digest));
      playing = {audio, button};
      button.textContent = '■';
      audio.addEventListener('ended', () => { button.textContent = '▶'; if (playing?.audio === audio) playing = null; });
      await audio.play();
    } catch (error) {
      button.textContent = '▶';
      toast(`Cannot play ${asset.name}: ${error.message}`, 'error');
    }
  });
  return h('div', {class: 'picture audio'}, h('span', {class: 'note', 'aria-hidden': 'true'}, '♪'), h('span', {class: 'format'}, type), button);
}

/** An asset's picture for a tile or list row: chosen and fetched once it nears the screen; a sound's note and button. */
export function thumbnail(asset, className = 'thumb') {
  if (asset.variants?.[0]?.mediaType?.startsWith('audio/')) return soundFace(asset);
  const img = h('img', {class: className, alt: '', decoding: 'async'});
  wanted.set(img, asset);
  observer.observe(img);
  return h('div', {class: `picture ${asset.kind}`}, img);
}

/** The largest picture of an asset that an <img> can show (what a drag out of the page carries). */
function largest(asset) {
  return [...(asset.variants ?? [])].filter((v) => v.mediaType !== 'video/webm').sort((a, b) => b.width * b.height - a.width * a.height)[0];
}

/** A tile for one asset: a link to its page, draggable out of the page (its picture's URL) or onto a map preview. */
export function assetCard(asset) {
  const footprint = `${asset.footprint.width}×${asset.footprint.height}`;
  // Its thumbnail may still be coming (`pending`): the smallest variant shows until a later listing names it.
  const tile = h('a', {class: 'tile', href: `#/asset/${asset.digest}`, dataset: {digest: asset.digest, name: asset.name, pending: asset.pending ? '' : undefined},
    title: `${asset.name} · ${asset.kind} ${footprint} · ${asset.pack}`},
    thumbnail(asset),
    h('span', {class: 'name'}, asset.name),
    h('span', {class: 'pack-label', hidden: true}, asset.pack),
    h('span', {class: 'meta'},
      h('span', {class: `kind ${asset.kind}`}, asset.kind),
      h('span', {}, footprint),
      asset.grid ? h('span', {class: 'grid-kind'}, `${asset.grid.orientation} hex`) : null));
  // Dragged out of the page: the picture's URL (a VTT or a browser tab takes it); onto the map preview: the asset.
  tile.addEventListener('dragstart', (event) => {
    const picture = largest(asset);
    const url = new URL(`/v1/blobs/${picture?.digest ?? asset.digest}`, location.origin).href;
    event.dataTransfer.setData('text/uri-list', url);
    event.dataTransfer.setData('text/plain', url);
    event.dataTransfer.setData('application/x-hoard-asset', JSON.stringify(
      {digest: asset.digest, name: asset.name, kind: asset.kind, footprint: asset.footprint}));
    event.dataTransfer.effectAllowed = 'copyLink';
  });
  return tile;
}

function chip(label, isActive, href, count) {
  return h('a', {class: `chip${isActive ? ' active' : ''}`, href, 'aria-current': isActive ? 'true' : null},
    h('span', {class: 'chip-label'}, label), count === undefined ? null : h('span', {class: 'count'}, String(count)));
}

function stateFrom(params) {
  return {pack: params.get('pack') ?? '', kind: params.get('kind') ?? '', footprint: params.get('footprint') ?? '',
    grid: params.get('grid') ?? '', q: params.get('q') ?? ''};
}

function link(state, change) {
  const next = {...state, ...change};
  return '#/' + query(filtersOf(next));
}

/** "2x2" → "2×2". */
function footprintLabel(key) {
  return key.replace('x', '×');
}

/** The sentence above the grid. */
function summaryText(state, total) {
  const parts = [];
  if (state.q) parts.push(`whose name or folder contains “${state.q}”`);
  if (state.kind) parts.push(`of kind ${state.kind}`);
  if (state.footprint) parts.push(`of ${footprintLabel(state.footprint)} tiles`);
  if (state.grid) parts.push(`made for ${state.grid === 'hex' ? 'hexes' : 'squares'}`);
  if (state.pack) parts.push(`in ${state.pack}`);
  if (total === 0) return `No asset ${parts.join(', ') || 'here'}. Clear a filter to see more.`;
  return `${plural(total, 'asset')}${parts.length ? ' ' + parts.join(', ') : ''}`;
}

/** The pack's author, licence and documents (LICENSE, README, CREDITS), each opening in a new tab. */
async function showDocuments(card, name) {
  const detail = await api(`/v1/packs/${encodeURIComponent(name)}`).catch(() => null);
  if (!detail) return;
  const facts = [detail.author ? `by ${detail.author}` : null, detail.license ? `licence ${detail.license}` : null].filter(Boolean);
  if (facts.length) card.append(h('p', {class: 'pack-credit'}, facts.join(' · ')));
  if (!detail.documents?.length) return;
  card.append(h('p', {class: 'pack-documents'}, detail.documents.map((document) => {
    const path = `/v1/packs/${encodeURIComponent(name)}/documents/${encodeURIComponent(document.name)}`;
    const open = h('button', {type: 'button', class: 'ghost small document'}, document.name);
    open.addEventListener('click', () => pictureURL(document.digest, path).then((url) => window.open(url, '_blank', 'noopener'), () => {}));
    return open;
  })));
}

/** The selected pack's card: its facts, documents, and (for its group's members and admins) visibility and deletion. */
function packCard(pack) {
  const visibility = h('button', {type: 'button', class: 'ghost small', id: 'pack-visibility'},
    pack.isPublic ? 'Make private to its group' : 'Make public');
  const remove = h('button', {type: 'button', class: 'ghost small danger', id: 'pack-delete'}, 'Delete pack…');
  const confirmBox = h('div', {class: 'confirm', hidden: true});
  const card = h('div', {class: 'pack-info card'},
    h('h2', {}, pack.name),
    h('p', {class: 'muted'},
      `version ${pack.version ?? '–'} · ${plural(pack.assetCount, 'asset')} · ${bytes(pack.totalBytes)} · group `,
      h('strong', {}, pack.group), ' · ', pack.isPublic ? 'public' : 'private to its group'),
    pack.renditions && (pack.renditions.pending > 0 || pack.renditions.failed > 0)
      ? renditionProgress(pack.name, pack.group, pack.renditions) : null,
    h('p', {class: 'pack-actions'}, visibility, ' ', remove), confirmBox);
  visibility.addEventListener('click', async () => {
    try {
      await api(`/v1/packs/${encodeURIComponent(pack.name)}`, {method: 'PATCH', json: {isPublic: !pack.isPublic}});
      forgetBrowse();
      view = null;
      toast(pack.isPublic ? `“${pack.name}” is now private to ${pack.group}` : `“${pack.name}” is now public`);
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    } catch (error) {
      toast(error.status === 403 ? `Only members of ${pack.group} or an admin may change this pack.` : `Cannot change it: ${error.message}`, 'error');
    }
  });
  remove.addEventListener('click', () => {
    const yes = h('button', {type: 'button', class: 'primary danger', id: 'pack-delete-confirm'}, `Delete “${pack.name}”`);
    const no = h('button', {type: 'button', class: 'ghost'}, 'Keep it');
    replace(confirmBox, h('p', {}, `Delete “${pack.name}” and its ${plural(pack.versionCount ?? 1, 'version')}? Sessions that use its art keep it; `,
      'nobody can browse it afterwards.'), yes, ' ', no);
    confirmBox.hidden = false;
    no.addEventListener('click', () => { confirmBox.hidden = true; remove.focus(); });
    yes.addEventListener('click', async () => {
      try {
        await api(`/v1/packs/${encodeURIComponent(pack.name)}`, {method: 'DELETE'});
        forgetBrowse();
        view = null;
        toast(`Deleted “${pack.name}”`);
        location.hash = '#/';
      } catch (error) {
        toast(error.status === 403 ? `Only members of ${pack.group} or an admin may delete this pack.` : `Cannot delete it: ${error.message}`, 'error');
      }
    });
    yes.focus();
  });
  showDocuments(card, pack.name);
  return card;
}

/** The browse view, kept between filter changes so typing in the search box is never interrupted. */
let view = null;

export async function showBrowse(main, params) {
  const state = stateFrom(params);
  if (view && view.section.isConnected) return view.update(state);
  const {packs} = kept?.packs ? kept : await api('/v1/packs');
  view = buildView(main, packs, state);
  await view.update(state, true);
}

function buildView(main, packs, initial) {
  let state = initial;
  const title = h('h1', {id: 'browse-title'});
  const search = h('input', {type: 'search', id: 'search', placeholder: 'Search names and folders', value: state.q,
    'aria-label': 'Search assets by name or folder', spellcheck: 'false'});
  let timer;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const q = search.value.trim();
      if (q === state.q) return;
      history.replaceState(null, '', link(state, {q}));
      update({...state, q});
    }, 250);
  });
  const size = h('select', {id: 'tile-size', 'aria-label': 'Show assets as'},
    Object.entries(SIZES).map(([value, label]) => h('option', {value}, label)));
  size.value = SIZES[localStorage.getItem(SIZE_KEY)] ? localStorage.getItem(SIZE_KEY) : 'medium';
  const kinds = h('div', {class: 'chips kinds', role: 'group', 'aria-label': 'Kind'});
  const footprints = h('div', {class: 'chips footprints', role: 'group', 'aria-label': 'Footprint'});
  const grids = h('div', {class: 'chips grids', role: 'group', 'aria-label': 'Grid'});
  const packList = h('div', {class: 'chips packs', role: 'group', 'aria-label': 'Pack'});
  const filterCount = h('span', {class: 'count'});
  const filters = h('details', {class: 'filters', id: 'filters'},
    h('summary', {}, 'Filters ', filterCount),
    h('div', {class: 'filter-row'}, h('span', {class: 'filter-name', 'aria-hidden': 'true'}, 'Kind'), kinds),
    h('div', {class: 'filter-row'}, h('span', {class: 'filter-name', 'aria-hidden': 'true'}, 'Footprint'), footprints),
    h('div', {class: 'filter-row'}, h('span', {class: 'filter-name', 'aria-hidden': 'true'}, 'Grid'), grids),
    h('div', {class: 'filter-row'}, h('span', {class: 'filter-name', 'aria-hidden': 'true'}, 'Pack'), packList));
  // Open on wide screens; on a phone the filters fold away so the first screen shows assets.
  filters.open = !window.matchMedia('(max-width: 560px)').matches;
  const packSlot = h('div', {});
  // The skip link lands here, past the search and the filters.
  const summary = h('p', {class: 'summary muted', id: 'summary', role: 'status', tabindex: '-1', dataset: {skip: ''}});
  const grid = h('div', {class: `grid size-${size.value}`, id: 'grid'});
  const more = h('button', {type: 'button', class: 'ghost more', id: 'more', hidden: true}, 'Show more');
  const sentinel = h('div', {class: 'sentinel', 'aria-hidden': 'true'});
  size.addEventListener('change', () => {
    localStorage.setItem(SIZE_KEY, size.value);
    grid.className = `grid size-${size.value}`;
    // Pictures already shown stay; those not yet fetched are chosen for the new size.
  });
  // On a wide screen the filters are a column beside the grid (CSS); on a narrow one they come first, folded.
  const section = h('section', {class: 'browse'},
    h('div', {class: 'browse-head'}, title,
      h('div', {class: 'toolbar'}, search, h('span', {class: 'nowrap'}, h('label', {class: 'inline', for: 'tile-size'}, 'Show as'), ' ', size))),
    packs.length ? h('div', {class: 'browse-body'}, filters, h('div', {class: 'results'}, packSlot, summary, grid, more, sentinel))
      : h('div', {class: 'card notice'}, h('h2', {}, 'No packs yet'),
        h('p', {}, 'Upload a pack (a zip of tokens/, objects/, textures/, walls/, backgrounds/) to start. ',
          h('a', {href: '#/upload'}, 'Upload a pack'))));
  replace(main, section);
  document.title = 'Browse · Hoard';
  title.textContent = 'Browse assets';
  // Without packs there is no grid: the notice says how to upload one.
  if (!packs.length) return {section, update: async () => {}};

  let listing = null;
  const names = new Map();

  function renderFilters(facets) {
    const kindCounts = facets?.kind ?? {};
    replace(kinds, chip('All kinds', !state.kind, link(state, {kind: ''})),
      [...new Set([...KINDS, ...Object.keys(kindCounts)])].map((kind) =>
        chip(kind, kind === state.kind, link(state, {kind}), kindCounts[kind] ?? 0)));
    const footprintCounts = Object.entries(facets?.footprint ?? {}).sort((a, b) => b[1] - a[1]).slice(0, FOOTPRINTS)
      .sort(([a], [b]) => { const [aw, ah] = a.split('x').map(Number); const [bw, bh] = b.split('x').map(Number); return aw * ah - bw * bh || aw - bw; });
    if (state.footprint && !footprintCounts.some(([key]) => key === state.footprint)) footprintCounts.push([state.footprint, 0]);
    replace(footprints, chip('Any size', !state.footprint, link(state, {footprint: ''})),
      footprintCounts.map(([key, count]) => chip(footprintLabel(key), key === state.footprint, link(state, {footprint: key}), count)));
    // The grid a pack's art was made for (pack.json's grid): square tiles or hexes.
    replace(grids, chip('Any grid', !state.grid, link(state, {grid: ''})),
      [['square', 'Square'], ['hex', 'Hex']].map(([key, label]) => chip(label, key === state.grid, link(state, {grid: key}))));
    replace(packList, chip('All packs', !state.pack, link(state, {pack: ''})),
      packs.map((pack) => chip(pack.name, pack.name === state.pack, link(state, {pack: pack.name}), pack.assetCount)));
    const active = [state.kind, state.footprint, state.grid, state.pack].filter(Boolean).length;
    filterCount.textContent = active ? `(${active} on)` : '';
    const current = packs.find((p) => p.name === state.pack);
    replace(packSlot, current ? packCard(current) : null);
    title.textContent = current ? current.name : 'Browse assets';
    document.title = `${current ? current.name : 'Browse'} · Hoard`;
  }

  function labelRepeats(cards) {
    for (const card of cards) names.set(card.dataset.name, (names.get(card.dataset.name) ?? 0) + 1);
    if (state.pack) return;
    for (const card of grid.children) {
      if ((names.get(card.dataset.name) ?? 0) > 1) card.querySelector('.pack-label').hidden = false;
    }
  }

  function show(assets, append) {
    const cards = assets.map(assetCard);
    if (append) grid.append(...cards); else { names.clear(); replace(grid, cards); }
    labelRepeats(cards);
    more.hidden = !listing.next;
  }

  /** The page after `cursor`, asked for once: the next page is fetched as soon as one is shown, ready for the scroll. */
  function pageAfter(current, cursor) {
    if (current.ahead?.cursor !== cursor) {
      const promise = api('/v1/assets' + query({...filtersOf(state), cursor, limit: PAGE}));
      promise.catch(() => {});
      current.ahead = {cursor, promise};
    }
    return current.ahead.promise;
  }

  async function loadMore() {
    if (!listing?.next || listing.loading) return;
    const current = listing;
    current.loading = true;
    try {
      const page = await pageAfter(current, current.next);
      if (listing !== current) return;
      current.assets.push(...page.assets);
      current.next = page.nextCursor;
      show(page.assets, true);
    } catch (error) {
      current.ahead = null;
      toast(`Cannot load more assets: ${error.message}`, 'error');
      return;
    } finally {
      current.loading = false;
    }
    if (current.next) pageAfter(current, current.next);
    loadIfNearEnd();
  }

  /** Scrolled on while a page came (or the page is short): the observer may not see the end come near again. */
  function loadIfNearEnd() {
    requestAnimationFrame(() => { if (section.isConnected && sentinel.getBoundingClientRect().top < innerHeight + NEAR_END) loadMore(); });
  }

  async function update(next, isFirst = false) {
    state = next;
    if (search.value.trim() !== state.q && document.activeElement !== search) search.value = state.q;
    const key = JSON.stringify(filtersOf(state));
    if (isFirst && kept?.key === key) {
      listing = kept.listing;
      renderFilters(kept.facets);
      summary.textContent = summaryText(state, listing.total);
      show(listing.assets, false);
      const y = kept.scrollY;
      requestAnimationFrame(() => window.scrollTo(0, y));
      kept = {...kept, packs: null};
      return;
    }
    renderFilters(listing?.facets);
    const current = {key, assets: [], next: null, total: 0, loading: true};
    listing = current;
    const page = await api('/v1/assets' + query({...filtersOf(state), limit: PAGE, facets: 'true'}));
    if (listing !== current) return;
    current.loading = false;
    current.assets = page.assets;
    current.next = page.nextCursor;
    current.total = page.total;
    current.facets = page.facets;
    renderFilters(page.facets);
    summary.textContent = summaryText(state, page.total);
    show(page.assets, false);
    kept = {key, listing: current, facets: page.facets, scrollY: isFirst ? 0 : window.scrollY, packs: null};
    if (current.next) pageAfter(current, current.next);
    loadIfNearEnd();
  }

  /** Tiles shown while their thumbnails were being made get them once a listing names them (read every few seconds). */
  async function pickUpPictures() {
    const waiting = new Map([...grid.querySelectorAll('.tile[data-pending]')].map((tile) => [tile.dataset.digest, tile]));
    if (!waiting.size || !listing || listing.loading) return;
    const current = listing;
    const page = await api('/v1/assets' + query({...filtersOf(state), limit: Math.min(1000, Math.max(PAGE, current.assets.length))})).catch(() => null);
    if (!page || listing !== current) return;
    for (const asset of page.assets) {
      const tile = waiting.get(asset.digest);
      if (!tile || asset.pending) continue;
      const index = current.assets.findIndex((a) => a.digest === asset.digest);
      if (index >= 0) current.assets[index] = asset;
      tile.querySelector('.picture')?.replaceWith(thumbnail(asset));
      delete tile.dataset.pending;
    }
  }
  const picking = setInterval(() => { if (section.isConnected) pickUpPictures(); }, 3000);

  more.addEventListener('click', () => loadMore());
  // Infinite scrolling: the next page is asked for well before the end of the grid shows.
  const nearEnd = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) loadMore(); }, {rootMargin: `${NEAR_END}px`});
  nearEnd.observe(sentinel);
  const onScroll = () => {
    if (section.isConnected && kept?.listing === listing) kept.scrollY = window.scrollY;
  };
  const onLeave = () => {
    if (section.isConnected) return;
    // Left (for an asset, say): keep the packs too, so the way back draws at once.
    if (kept && !kept.packs) kept.packs = packs;
    window.removeEventListener('scroll', onScroll);
    window.removeEventListener('hashchange', onLeave);
    clearInterval(picking);
    nearEnd.disconnect();
  };
  window.addEventListener('scroll', onScroll, {passive: true});
  window.addEventListener('hashchange', onLeave);
  return {section, update};
}

function filtersOf(state) {
  return {pack: state.pack, kind: state.kind, footprint: state.footprint, grid: state.grid, q: state.q};
}
