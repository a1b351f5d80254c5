// A pack's generated pictures (thumbnails, previews, smaller versions) are made in the background after its import:
// the pack is usable at once, and this shows how far they are, updated until they are done, then what could not be
// made. The server's `renditions` counts are per asset (GET /v1/packs/{name}).
import {api, query} from './api.js';
import {h, plural, replace} from './dom.js';

/** How often the progress is read again while pictures are being made. */
const POLL_MS = 2000;

/** A line and a bar for one pack's pictures; `initial` is its `renditions` counts when known. */
export function renditionProgress(name, group, initial) {
  const fill = h('div', {class: 'bar-fill'});
  const bar = h('div', {class: 'progress renditions-bar', role: 'progressbar', 'aria-label': `Thumbnails of ${name}`,
    'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0'}, fill);
  const text = h('p', {class: 'progress-text muted', role: 'status'});
  const problems = h('div', {class: 'rendition-problems'});
  const box = h('div', {class: 'renditions', dataset: {pack: name}}, bar, text, problems);
  let timer = null;

  function draw(counts, failures) {
    const made = counts.done + counts.failed + counts.cancelled;
    const percent = counts.total > 0 ? Math.round((made / counts.total) * 100) : 100;
    fill.style.width = `${percent}%`;
    bar.setAttribute('aria-valuenow', String(percent));
    box.dataset.pending = String(counts.pending);
    if (counts.pending > 0) {
      text.textContent = `Making thumbnails and previews: ${counts.done} of ${plural(counts.total, 'asset')} done. `
        + 'The pack is usable now; pictures appear as they are made.';
    } else {
      text.textContent = `Thumbnails and previews made for ${counts.done} of ${plural(counts.total, 'asset')}`
        + (counts.failed ? `; ${counts.failed} could not be made.` : '.') + (counts.cancelled ? ` ${counts.cancelled} cancelled.` : '');
      bar.hidden = true;
    }
    replace(problems, failures?.length ? h('ul', {class: 'problems'}, failures.slice(0, 50).map((problem) =>
      h('li', {}, h('code', {}, problem.code), ' ', h('strong', {}, problem.asset), `: ${problem.message}`))) : null);
  }

  async function poll() {
    timer = null;
    if (!box.isConnected) return;
    const detail = await api(`/v1/packs/${encodeURIComponent(name)}` + query({group})).catch(() => null);
    if (!box.isConnected) return;
    if (detail?.renditions) draw(detail.renditions, detail.renditionProblems);
    if (!detail || detail.renditions?.pending > 0) timer = setTimeout(poll, POLL_MS);
    else box.dispatchEvent(new CustomEvent('renditions-done', {bubbles: true}));
  }

  if (initial) draw(initial, null); else text.textContent = 'Making thumbnails and previews…';
  // The first read waits for the box to be on the page.
  timer = setTimeout(poll, initial?.pending === 0 ? 0 : POLL_MS / 4);
  return box;
}
