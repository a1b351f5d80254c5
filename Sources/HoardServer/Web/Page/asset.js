// One asset: a large preview, its footprint drawn on a grid, its variants and the packs that hold it.
import {api, loadImage, pictureURL, query, thumbnailDigest} from './api.js';
import {bytes, h, replace, toast} from './dom.js';

function copyButton(text) {
  return h('button', {type: 'button', class: 'ghost small', title: 'Copy the whole digest',
    onclick: async () => {
      try { await navigator.clipboard.writeText(text); toast('Digest copied'); } catch { toast('Copying is not allowed here', 'error'); }
    }}, 'Copy');
}

/** The footprint: W×H tiles and one tile of margin, the smallest picture drawn over its tiles. */
async function drawFootprint(canvas, descriptor) {
  const {width, height} = descriptor.footprint;
  const cols = width + 2;
  const rows = height + 2;
  const cssWidth = Math.min(canvas.parentElement.clientWidth || 320, 420);
  const tile = Math.max(8, Math.min(64, Math.floor(Math.min(cssWidth / cols, 320 / rows))));
  const ratio = window.devicePixelRatio || 1;
  canvas.width = cols * tile * ratio;
  canvas.height = rows * tile * ratio;
  canvas.style.width = `${cols * tile}px`;
  canvas.style.height = `${rows * tile}px`;
  const context = canvas.getContext('2d');
  context.scale(ratio, ratio);
  const paint = (image) => {
    context.clearRect(0, 0, cols * tile, rows * tile);
    context.fillStyle = '#f4f1ea';
    context.fillRect(0, 0, cols * tile, rows * tile);
    context.fillStyle = 'rgba(47, 93, 80, 0.14)';
    context.fillRect(tile, tile, width * tile, height * tile);
    if (image) context.drawImage(image, tile, tile, width * tile, height * tile);
    context.strokeStyle = 'rgba(40, 40, 40, 0.25)';
    context.lineWidth = 1;
    for (let x = 0; x <= cols; x++) { context.beginPath(); context.moveTo(x * tile + 0.5, 0); context.lineTo(x * tile + 0.5, rows * tile); context.stroke(); }
    for (let y = 0; y <= rows; y++) { context.beginPath(); context.moveTo(0, y * tile + 0.5); context.lineTo(cols * tile, y * tile + 0.5); context.stroke(); }
    context.strokeStyle = '#2f5d50';
    context.lineWidth = 2;
    context.strokeRect(tile, tile, width * tile, height * tile);
  };
  paint(null);
  const digest = thumbnailDigest(descriptor);
  if (digest) paint(await loadImage(digest).catch(() => null));
}

const EXTENSIONS = {'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'image/gif': 'gif', 'image/apng': 'png', 'video/webm': 'webm',
  'audio/ogg': 'ogg', 'audio/mpeg': 'mp3', 'audio/flac': 'flac', 'audio/wav': 'wav', 'audio/mp4': 'm4a', 'audio/webm': 'weba'};

/** "vorbis · stereo · 48 kHz · 2:05", from a sound variant's fields. */
function soundFacts(variant) {
  const seconds = Math.round((variant.durationMs ?? 0) / 1000);
  const length = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
  const channels = variant.channels === 1 ? 'mono' : variant.channels === 2 ? 'stereo' : `${variant.channels} channels`;
  return `${variant.codec} · ${channels} · ${(variant.sampleRate / 1000).toFixed(1).replace('.0', '')} kHz · ${length}`;
}

/** A button that saves one variant under the asset's name and scale (`goblin@2x.png`). */
function downloadButton(name, variant) {
  const button = h('button', {type: 'button', class: 'ghost small download', title: `Download this ${variant.width} × ${variant.height} picture`},
    'Download');
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const url = await pictureURL(variant.digest);
      const base = name.split('/').pop() || 'asset';
      const save = h('a', {href: url, download: `${base}@${variant.scale}x.${EXTENSIONS[variant.mediaType] ?? 'bin'}`, hidden: true});
      document.body.append(save);
      save.click();
      save.remove();
    } catch (error) {
      toast(`Cannot download: ${error.message}`, 'error');
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** "animated · 12 frames · 1.2 s", from a variant's animation fields. */
function animation(variant) {
  const parts = ['animated'];
  if (variant.frames) parts.push(`${variant.frames} frames`);
  if (variant.durationMs) parts.push(`${(variant.durationMs / 1000).toFixed(1)} s`);
  return parts.join(' · ');
}

export async function showAsset(main, digest) {
  const descriptor = await api(`/v1/assets/${digest}`);
  const listing = await api('/v1/assets' + query({q: descriptor.name, limit: 1000}));
  const packs = [...new Set(listing.assets.filter((a) => a.digest === digest).map((a) => a.pack))];
  // The listing has what was made after the import (generated LODs, the thumbnail); the descriptor the shipped art.
  const listed = listing.assets.find((a) => a.digest === digest);
  const shown = listed ?? descriptor;
  // What only the descriptor says of a shipped variant (a sound's codec and length, an animation's frames) joins it.
  const described = new Map(descriptor.variants.map((variant) => [variant.digest, variant]));
  const variants = shown.variants.map((variant) => ({...described.get(variant.digest), ...variant})).sort((a, b) => a.scale - b.scale);
  const largest = variants[variants.length - 1];
  // Animated GIF, APNG and WebP move in an <img>; a WebM video plays, muted and looping, in a <video>.
  const isSound = largest?.mediaType?.startsWith('audio/');
  const preview = isSound ? h('audio', {class: 'preview', controls: '', preload: 'metadata', 'aria-label': descriptor.name})
    : largest?.mediaType === 'video/webm'
    ? h('video', {class: 'preview', autoplay: '', loop: '', muted: '', playsinline: '', 'aria-label': descriptor.name})
    : h('img', {class: 'preview', alt: descriptor.name});
  const previewBox = h('div', {class: `picture large ${descriptor.kind}`}, preview);
  const canvas = h('canvas', {class: 'footprint', 'aria-label': `Footprint: ${descriptor.footprint.width} by ${descriptor.footprint.height} tiles`});
  const share = h('button', {type: 'button', class: 'ghost', id: 'share-asset'}, 'Share a link');
  const shareOut = h('div', {class: 'share-out'});
  share.addEventListener('click', async () => {
    try {
      const created = await api('/v1/shares', {method: 'POST', json: {asset: digest}});
      const url = new URL(created.url, location.origin).href;
      const revoke = h('button', {type: 'button', class: 'ghost small', id: 'revoke-share'}, 'Revoke');
      revoke.addEventListener('click', async () => {
        try {
          await api(`/v1/shares/${encodeURIComponent(created.id)}`, {method: 'DELETE'});
          replace(shareOut, h('p', {class: 'muted'}, 'The link was revoked; it no longer opens the picture.'));
        } catch (error) {
          toast(`Cannot revoke: ${error.message}`, 'error');
        }
      });
      replace(shareOut, h('p', {}, 'Anyone with this link can see the picture until you revoke it: '),
        h('a', {href: url, target: '_blank', rel: 'noopener', class: 'share-link'}, url), ' ', revoke);
    } catch (error) {
      toast(`Cannot share: ${error.message}`, 'error');
    }
  });

  replace(main, h('section', {class: 'asset'},
    h('nav', {class: 'crumbs'}, h('a', {href: '#/'}, 'Browse'), ' › ', packs[0] ? h('a', {href: '#/' + query({pack: packs[0]})}, packs[0]) : null,
      packs[0] ? ' › ' : null, h('span', {}, descriptor.name)),
    h('div', {class: 'asset-head'},
      previewBox,
      h('div', {class: 'asset-facts card'},
        h('h1', {class: 'asset-name'}, descriptor.name),
        h('p', {}, h('span', {class: `kind ${descriptor.kind}`}, descriptor.kind), ' ',
          `${descriptor.footprint.width}×${descriptor.footprint.height} tiles`),
        listed?.pending ? h('p', {class: 'muted', id: 'pictures-coming'}, 'Its thumbnail and smaller versions are being made.') : null,
        h('h3', {}, 'Footprint'), canvas,
        h('h3', {}, 'In packs'),
        packs.length ? h('ul', {class: 'packs-list'}, packs.map((pack) => h('li', {}, h('a', {href: '#/' + query({pack})}, pack))))
          : h('p', {class: 'muted'}, 'No pack you can see lists it.'),
        h('h3', {}, 'Asset digest'), h('p', {class: 'digest-line'}, h('code', {class: 'digest full'}, digest), copyButton(digest)),
        share, shareOut)),
    h('h2', {}, 'Variants'),
    h('div', {class: 'table-wrap'}, h('table', {class: 'variants'},
      h('thead', {}, h('tr', {}, h('th', {}, 'Scale'), h('th', {}, isSound ? 'Sound' : 'Pixels'), h('th', {}, 'Size'), h('th', {}, 'Type'), h('th', {}, 'Digest'),
        h('th', {}, h('span', {class: 'visually-hidden'}, 'Download')))),
      // Each cell names its column (data-label): on a phone the rows become cards, with no table to scroll sideways.
      h('tbody', {}, variants.map((variant) => h('tr', {},
        h('td', {dataset: {label: 'Scale'}}, `@${variant.scale}x`, variant.generated ? h('span', {class: 'badge'}, 'generated') : null,
          variant.animated ? h('span', {class: 'badge'}, animation(variant)) : null),
        h('td', {dataset: {label: isSound ? 'Sound' : 'Pixels'}}, isSound ? soundFacts(variant) : `${variant.width} × ${variant.height}`),
        h('td', {dataset: {label: 'Size'}}, bytes(variant.size)),
        h('td', {dataset: {label: 'Type'}}, variant.mediaType),
        h('td', {dataset: {label: 'Digest'}}, h('code', {class: 'digest full'}, variant.digest), copyButton(variant.digest)),
        h('td', {}, downloadButton(descriptor.name, variant)))))))));

  drawFootprint(canvas, shown);
  // Smallest first, so something shows at once; then the largest.
  const first = thumbnailDigest(shown);
  if (first && preview.tagName === 'IMG') pictureURL(first).then((url) => { if (!preview.src) preview.src = url; }, () => {});
  if (largest) pictureURL(largest.digest).then((url) => { preview.src = url; }, () => {});
}
