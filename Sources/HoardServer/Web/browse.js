// Browse: the packs as chips, kinds as filters, a search box and a grid of asset thumbnails.
import {api, pictureURL, query, thumbnailDigest} from './api.js';
import {bytes, h, plural, replace} from './dom.js';

const KINDS = ['token', 'object', 'texture', 'wall', 'background'];
const PAGE = 60;

/** A lazily loaded thumbnail: fetched when it scrolls into view. */
const observer = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    observer.unobserve(entry.target);
    const img = entry.target;
    pictureURL(img.dataset.digest).then((url) => { img.src = url; }, () => img.classList.add('broken'));
  }
}, {rootMargin: '200px'});

export function thumbnail(asset, className = 'thumb') {
  const digest = thumbnailDigest(asset);
  const img = h('img', {class: className, alt: '', loading: 'lazy', dataset: {digest: digest ?? ''}});
  if (digest) observer.observe(img);
  return h('div', {class: `picture ${asset.kind}`}, img);
}

function assetCard(asset) {
  return h('a', {class: 'tile', href: `#/asset/${asset.digest}`, dataset: {digest: asset.digest}},
    thumbnail(asset),
    h('span', {class: 'name'}, asset.name),
    h('span', {class: 'meta'},
      h('span', {class: `kind ${asset.kind}`}, asset.kind),
      h('span', {}, `${asset.footprint.width}×${asset.footprint.height}`)));
}

function chip(label, isActive, href, count) {
  return h('a', {class: `chip${isActive ? ' active' : ''}`, href, 'aria-pressed': String(isActive)},
    h('span', {class: 'chip-label'}, label), count === undefined ? null : h('span', {class: 'count'}, String(count)));
}

function link(state, change) {
  const next = {...state, ...change};
  return '#/' + query({pack: next.pack, kind: next.kind, q: next.q});
}

/** Adds the pack's author, licence and documents (LICENSE, README, CREDITS) to its card; each opens in a new tab. */
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

export async function showBrowse(main, params) {
  const state = {pack: params.get('pack') ?? '', kind: params.get('kind') ?? '', q: params.get('q') ?? ''};
  const {packs} = await api('/v1/packs');
  const search = h('input', {type: 'search', id: 'search', placeholder: 'Search by name', value: state.q,
    'aria-label': 'Search assets by name', autocomplete: 'off'});
  let timer;
  search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => { history.replaceState(null, '', link(state, {q: search.value.trim()})); load({...state, q: search.value.trim()}); }, 250);
  });
  const current = packs.find((p) => p.name === state.pack);
  const packList = h('div', {class: 'chips packs', role: 'list', 'aria-label': 'Packs'},
    chip('All packs', !state.pack, link(state, {pack: ''})),
    packs.map((pack) => chip(pack.name, pack.name === state.pack, link(state, {pack: pack.name}), pack.assetCount)));
  const kinds = h('div', {class: 'chips kinds', role: 'list', 'aria-label': 'Kinds'},
    chip('All kinds', !state.kind, link(state, {kind: ''})),
    KINDS.map((kind) => chip(kind, kind === state.kind, link(state, {kind}))));
  const summary = h('p', {class: 'summary muted', id: 'summary'});
  const grid = h('div', {class: 'grid', id: 'grid'});
  const more = h('button', {type: 'button', class: 'ghost more', hidden: true}, 'Show more');
  const packInfo = current ? h('div', {class: 'pack-info card'},
    h('h2', {}, current.name),
    h('p', {class: 'muted'},
      `version ${current.version ?? '–'} · ${plural(current.assetCount, 'asset')} · ${bytes(current.totalBytes)} · group `,
      h('strong', {}, current.group), ' · ', current.isPublic ? 'public' : 'private to its group')) : null;
  if (packInfo) showDocuments(packInfo, current.name);
  replace(main,
    h('section', {class: 'browse'},
      h('div', {class: 'toolbar'}, search, kinds),
      packs.length ? packList : h('div', {class: 'card notice'}, h('h2', {}, 'No packs yet'),
        h('p', {}, 'Upload a pack (a zip of tokens/, objects/, textures/, walls/, backgrounds/) to start. ',
          h('a', {href: '#/upload'}, 'Upload a pack'))),
      packInfo, summary, grid, more));

  let offset = 0;
  let filters = state;
  async function load(next, append = false) {
    filters = next;
    if (!append) offset = 0;
    const page = await api('/v1/assets' + query({pack: filters.pack, kind: filters.kind, q: filters.q, offset, limit: PAGE}));
    if (filters !== next) return;
    const cards = page.assets.map(assetCard);
    if (append) grid.append(...cards); else replace(grid, cards);
    offset = page.nextOffset ?? offset + page.assets.length;
    more.hidden = page.nextOffset === undefined || page.nextOffset === null;
    summary.textContent = page.total === 0
      ? (filters.q ? `No asset’s name contains “${filters.q}”.` : 'No assets match.')
      : `${plural(page.total, 'asset')}${filters.q ? ` whose name contains “${filters.q}”` : ''}`;
  }
  more.addEventListener('click', () => load(filters, true));
  await load(state);
}
