// Upload a pack: choose or drop an archive, watch a real progress bar, then read the import report.
import {uploadPack} from './api.js';
import {bytes, h, plural, replace} from './dom.js';

/** Plain words for the import report's problem codes; the server's message follows. */
const WORDS = {
  UNSUPPORTED_FORMAT: 'Not an archive Hoard can read',
  CORRUPT_ARCHIVE: 'The archive is damaged',
  UNSAFE_PATH: 'A path would leave the pack',
  INVALID_NAME: 'A file name cannot be used',
  NAME_COLLISION: 'Two files have the same name',
  TYPE_MISMATCH: 'The name says one picture type, the bytes another',
  UNREADABLE_IMAGE: 'Not a picture Hoard can read',
  IMAGE_TOO_LARGE: 'The picture is too large',
  BAD_MANIFEST: 'pack.json is not right',
  BAD_FOOTPRINT: 'The footprint in the name is wrong',
  BAD_SCALE: 'The @-scale in the name is wrong',
  VARIANT_MISMATCH: 'The variants do not match',
  DUPLICATE_VARIANT: 'The same variant twice',
  FOOTPRINT_MISMATCH: 'The picture’s size does not fit its footprint',
  IGNORED_ENTRY: 'Skipped',
  EMPTY_PACK: 'No pictures found',
  PACK_CONFLICT: 'The pack name or version is taken',
  QUOTA_EXCEEDED: 'Your group is out of space',
};

function problemList(problems) {
  return h('ul', {class: 'problems'}, problems.map((problem) => h('li', {class: problem.severity ?? 'error'},
    h('span', {class: 'severity'}, problem.severity === 'warning' ? 'Warning' : 'Error'),
    h('span', {class: 'entry'}, problem.entry ?? 'the archive'),
    h('span', {class: 'message'}, WORDS[problem.code] ? `${WORDS[problem.code]}: ${problem.message}` : problem.message),
    h('code', {class: 'code'}, problem.code))));
}

function report(status, body) {
  if (status === 201 || status === 200) {
    const kinds = Object.entries(body.assetsByKind ?? {}).map(([kind, count]) => `${count} ${kind}${count === 1 ? '' : 's'}`).join(', ');
    return h('div', {class: 'card report ok', id: 'report'},
      h('h2', {}, body.outcome === 'unchanged' ? `“${body.pack}” is already here, unchanged` : `Imported “${body.pack}”, version ${body.version}`),
      h('dl', {class: 'facts'},
        h('dt', {}, 'Assets'), h('dd', {}, `${body.assets}${kinds ? ` (${kinds})` : ''}`),
        h('dt', {}, 'Files'), h('dd', {}, String(body.files)),
        h('dt', {}, 'Stored'), h('dd', {}, `${bytes(body.newBytes)} new, ${bytes(body.existingBytes)} already here`),
        h('dt', {}, 'Group'), h('dd', {}, body.group),
        h('dt', {}, 'Time'), h('dd', {}, `${body.seconds.toFixed(2)} s`)),
      body.warnings.length ? [h('h3', {}, plural(body.warnings.length, 'warning')), problemList(body.warnings)]
        : h('p', {class: 'muted'}, 'No warnings.'),
      h('p', {}, h('a', {class: 'button primary', href: '#/?pack=' + encodeURIComponent(body.pack)}, 'Browse the pack')));
  }
  const error = body?.error ?? {code: `HTTP_${status}`, message: `the server answered ${status}`};
  const problems = error.problems ?? [];
  return h('div', {class: 'card report refused', id: 'report'},
    h('h2', {}, 'The pack was refused; nothing was stored'),
    h('p', {}, error.message),
    problems.length ? [h('h3', {}, `${plural(problems.length, 'problem')}, file by file`), problemList(problems)] : null);
}

export async function showUpload(main) {
  const file = h('input', {type: 'file', id: 'pack-file', accept: '.zip,.tar,.tgz,.tar.gz,application/zip', class: 'visually-hidden'});
  const name = h('input', {type: 'text', id: 'pack-name', placeholder: 'from pack.json', autocomplete: 'off', maxlength: '128'});
  const chosen = h('p', {class: 'chosen muted'}, 'No file chosen yet.');
  const drop = h('label', {class: 'drop', for: 'pack-file', tabindex: '0'},
    h('strong', {}, 'Drop a pack here'), h('span', {}, 'or tap to choose a .zip, .tar or .tar.gz'), file);
  const bar = h('div', {class: 'bar-fill'});
  const progress = h('div', {class: 'progress', role: 'progressbar', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0', hidden: true}, bar);
  const status = h('p', {class: 'progress-text muted', id: 'progress-text'});
  const go = h('button', {type: 'button', class: 'primary', id: 'upload-button', disabled: true}, 'Upload');
  const out = h('div', {id: 'upload-result'});
  let selected = null;

  function choose(picked) {
    selected = picked;
    go.disabled = !picked;
    replace(chosen, picked ? [h('strong', {}, picked.name), ` · ${bytes(picked.size)}`] : 'No file chosen yet.');
  }
  file.addEventListener('change', () => choose(file.files[0] ?? null));
  drop.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); file.click(); } });
  for (const type of ['dragenter', 'dragover']) drop.addEventListener(type, (event) => { event.preventDefault(); drop.classList.add('over'); });
  for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => { event.preventDefault(); choose(event.dataTransfer.files[0] ?? null); });

  go.addEventListener('click', async () => {
    if (!selected) return;
    go.disabled = true;
    progress.hidden = false;
    replace(out);
    const started = performance.now();
    const setProgress = (sent, total, done) => {
      const percent = total > 0 ? Math.round((sent / total) * 100) : 0;
      bar.style.width = `${percent}%`;
      progress.setAttribute('aria-valuenow', String(percent));
      const seconds = (performance.now() - started) / 1000;
      const rate = seconds > 0 ? `${bytes(Math.round(sent / seconds))}/s` : '';
      status.textContent = done ? `Sent ${bytes(total)}; the server is checking and importing the pack…`
        : `${percent}% · ${bytes(sent)} of ${bytes(total)} ${rate ? '· ' + rate : ''}`;
    };
    setProgress(0, selected.size);
    try {
      const result = await uploadPack(selected, name.value.trim(), setProgress);
      progress.classList.toggle('failed', result.status >= 400);
      status.textContent = result.status >= 400 ? `Sent ${bytes(selected.size)}; the pack was refused.` : `Sent ${bytes(selected.size)} and imported.`;
      replace(out, report(result.status, result.body));
    } catch (error) {
      progress.classList.add('failed');
      status.textContent = error.message;
    } finally {
      go.disabled = !selected;
    }
  });

  replace(main, h('section', {class: 'upload'},
    h('h1', {}, 'Upload a pack'),
    h('div', {class: 'card'},
      drop, chosen,
      h('div', {class: 'row'},
        h('label', {for: 'pack-name'}, 'Pack name ', h('span', {class: 'muted'}, '(optional; wins over pack.json)')), name),
      go, progress, status),
    out,
    h('details', {class: 'card help'}, h('summary', {}, 'How to make a pack'),
      h('pre', {}, 'pack.json                  optional: name, version, author, license, tilePixels\n' +
        'tokens/goblin.png          a 1×1 token\ntokens/ogre_2x2.png        a 2×2 token\n' +
        'tokens/dragon [4x4]@2x.png @2x: twice the base resolution\nobjects/door_1x2.png       objects, textures, walls, backgrounds\n' +
        'textures/stone-floor.png   floor textures drawn into one tile'))));
}
