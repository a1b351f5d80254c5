// Upload a pack: choose or drop an archive, see the name it will be filed under (and confirm replacing a pack of
// that name), watch the upload and then the server's import, cancel, and read the import report.
import {api, uploadPack, importProgress} from './api.js';
import {bytes, h, plural, replace} from './dom.js';
import {forgetBrowse} from './browse.js';
import {renditionProgress} from './renditions.js';

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
  IMPORT_CANCELLED: 'Cancelled: nothing was stored',
  QUOTA_EXCEEDED: 'Your group is out of space',
};

/**
 * Problems as cards: what blocks the import first, then warnings; the same problem on many files is one card that
 * names how many files and lists them folded away.
 */
function problemList(problems) {
  const groups = new Map();
  for (const problem of problems) {
    const severity = problem.severity === 'warning' ? 'warning' : 'error';
    const key = `${severity}\u0000${problem.code}\u0000${problem.message}`;
    if (!groups.has(key)) groups.set(key, {severity, problem, entries: []});
    groups.get(key).entries.push(problem.entry ?? 'the archive');
  }
  const ordered = [...groups.values()].sort((a, b) => (a.severity === 'error' ? 0 : 1) - (b.severity === 'error' ? 0 : 1));
  return h('ul', {class: 'problems'}, ordered.map(({severity, problem, entries}) => h('li', {class: severity},
    h('span', {class: 'severity'}, severity === 'warning' ? 'Warning' : 'Blocks the import'),
    entries.length === 1 ? h('span', {class: 'entry'}, entries[0])
      : h('details', {class: 'entry'}, h('summary', {}, `${entries.length} files`),
        h('span', {}, entries.slice(0, 200).join('\n') + (entries.length > 200 ? `\n… and ${entries.length - 200} more` : ''))),
    h('span', {class: 'message'}, WORDS[problem.code] ? `${WORDS[problem.code]}: ${problem.message}` : problem.message),
    h('code', {class: 'code'}, problem.code))));
}

/**
 * What a zip says of itself, read in the browser from its central directory: {entries, paths, packFile}, the paths of
 * its files and the text of its pack.json at the root (else the first one a folder down) as {path, text}, or null; null
 * for any other file. The server names the pack from these (POST /v1/pack-name), by the importer's own rules.
 */
async function zipFacts(file) {
  if (!/\.zip$/i.test(file.name) || file.size < 22) return null;
  const tailSize = Math.min(file.size, 65557);
  const tail = new DataView(await file.slice(file.size - tailSize).arrayBuffer());
  let end = -1;
  for (let i = tail.byteLength - 22; i >= 0; i--) if (tail.getUint32(i, true) === 0x06054b50) { end = i; break; }
  if (end < 0) return null;
  const count = tail.getUint16(end + 10, true);
  const size = tail.getUint32(end + 12, true);
  const offset = tail.getUint32(end + 16, true);
  if (offset === 0xffffffff || offset + size > file.size) return null;
  const directory = new DataView(await file.slice(offset, offset + size).arrayBuffer());
  const facts = {entries: count, paths: [], packFile: null};
  const packFiles = [];
  for (let n = 0, at = 0; n < count && at + 46 <= directory.byteLength; n++) {
    if (directory.getUint32(at, true) !== 0x02014b50) return null;
    const method = directory.getUint16(at + 10, true);
    const compressed = directory.getUint32(at + 20, true);
    const nameLength = directory.getUint16(at + 28, true);
    const local = directory.getUint32(at + 42, true);
    const path = new TextDecoder().decode(new Uint8Array(directory.buffer, at + 46, nameLength));
    at += 46 + nameLength + directory.getUint16(at + 30, true) + directory.getUint16(at + 32, true);
    if (path.endsWith('/')) continue;
    facts.paths.push(path);
    if (/^([^/]+\/)?pack\.json$/.test(path) && compressed <= (1 << 20) && (method === 0 || method === 8)) {
      packFiles.push({path, local, compressed, method});
    }
  }
  const chosen = packFiles.find((p) => p.path === 'pack.json') ?? packFiles[0];
  if (chosen) {
    const header = new DataView(await file.slice(chosen.local, chosen.local + 30).arrayBuffer());
    const start = chosen.local + 30 + header.getUint16(26, true) + header.getUint16(28, true);
    const data = file.slice(start, start + chosen.compressed).stream();
    const text = await new Response(chosen.method === 8 ? data.pipeThrough(new DecompressionStream('deflate-raw')) : data).text();
    facts.packFile = {path: chosen.path, text};
  }
  return facts;
}

/** Where a predicted name comes from, in words. */
const SOURCES = {typed: 'as you typed it', packFile: 'from its pack.json', wrapperFolder: 'from the folder that holds every file',
  fileName: 'from the file name', tokenFile: 'from the token'};

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
      body.renditionJobs > 0 ? renditionProgress(body.pack, body.group, null) : null,
      h('p', {}, h('a', {class: 'button primary', href: '#/?pack=' + encodeURIComponent(body.pack)}, 'Browse the pack')));
  }
  const error = body?.error ?? {code: `HTTP_${status}`, message: `the server answered ${status}`};
  const problems = error.problems ?? [];
  return h('div', {class: 'card report refused', id: 'report'},
    h('h2', {}, 'The pack was refused; nothing was stored'),
    h('p', {}, error.message),
    problems.length ? [h('h3', {}, `${plural(problems.length, 'problem')}, file by file`), problemList(problems)] : null);
}

/** A random id for following the server's import of one upload. */
function progressId() {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
}

const PHASES = {receiving: 'receiving the archive', reading: 'reading and checking entries', publishing: 'storing the pictures',
  committing: 'recording the pack'};

export async function showUpload(main) {
  const file = h('input', {type: 'file', id: 'pack-file', accept: '.zip,.tar,.tgz,.tar.gz,application/zip', class: 'visually-hidden'});
  const name = h('input', {type: 'text', id: 'pack-name', placeholder: 'from pack.json, else the file name', autocomplete: 'off',
    maxlength: '128', 'aria-describedby': 'filed-as'});
  const chosen = h('p', {class: 'chosen muted'}, 'No file chosen yet.');
  const filedAs = h('p', {class: 'muted', id: 'filed-as'});
  const drop = h('label', {class: 'drop', for: 'pack-file', tabindex: '0'},
    h('strong', {}, 'Drop a pack here'), h('span', {}, 'or tap to choose a .zip, .tar or .tar.gz'), file);
  const bar = h('div', {class: 'bar-fill'});
  const progress = h('div', {class: 'progress', role: 'progressbar', 'aria-label': 'Upload', 'aria-valuemin': '0', 'aria-valuemax': '100',
    'aria-valuenow': '0', hidden: true}, bar);
  const importBar = h('div', {class: 'bar-fill'});
  const importProgressBar = h('div', {class: 'progress import', id: 'import-progress', role: 'progressbar', 'aria-label': 'Import',
    'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': '0', hidden: true}, importBar);
  const status = h('p', {class: 'progress-text muted', id: 'progress-text', role: 'status'});
  const go = h('button', {type: 'button', class: 'primary', id: 'upload-button', disabled: true}, 'Upload');
  const cancel = h('button', {type: 'button', class: 'ghost', id: 'upload-cancel', hidden: true}, 'Cancel');
  const confirmBox = h('div', {class: 'confirm', id: 'replace-confirm', hidden: true});
  const out = h('div', {id: 'upload-result'});
  let selected = null;
  let facts = null;
  let predicted = null;
  let entryTotal = 0;
  let upload = null;

  /** What the server will file the pack as ({name, source, isSure, problem}: POST /v1/pack-name), asked afresh. */
  async function predict() {
    if (!selected) return null;
    const picked = selected;
    const typed = name.value.trim();
    const answer = await api('/v1/pack-name', {method: 'POST', json: {name: typed || undefined, fileName: picked.name,
      paths: facts?.paths, packFile: facts?.packFile ?? undefined}}).catch(() => null);
    return selected === picked && name.value.trim() === typed ? answer : null;
  }

  async function showFiledAs() {
    predicted = await predict();
    if (!selected || !predicted) { filedAs.textContent = ''; return; }
    const unsure = predicted.isSure ? '' : ', unless its pack.json or a folder holding every file names it';
    filedAs.textContent = predicted.name ? `It will be filed as “${predicted.name}” (${SOURCES[predicted.source] ?? ''}${unsure}).`
      : `It cannot be filed: ${predicted.problem}.`;
  }

  async function choose(picked) {
    selected = picked;
    facts = null;
    predicted = null;
    entryTotal = 0;
    go.disabled = !picked;
    confirmBox.hidden = true;
    replace(chosen, picked ? [h('strong', {}, picked.name), ` · ${bytes(picked.size)}`] : 'No file chosen yet.');
    filedAs.textContent = '';
    if (!picked) return;
    const read = await zipFacts(picked).catch(() => null);
    if (selected !== picked) return;
    facts = read;
    entryTotal = read?.entries ?? 0;
    await showFiledAs();
  }

  /** After each upload: nothing of it is left in the form for the next one. */
  function clearForm() {
    file.value = '';
    name.value = '';
    choose(null);
  }

  file.addEventListener('change', () => choose(file.files[0] ?? null));
  name.addEventListener('input', showFiledAs);
  drop.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); file.click(); } });
  for (const type of ['dragenter', 'dragover']) drop.addEventListener(type, (event) => { event.preventDefault(); drop.classList.add('over'); });
  for (const type of ['dragleave', 'drop']) drop.addEventListener(type, () => drop.classList.remove('over'));
  drop.addEventListener('drop', (event) => { event.preventDefault(); choose(event.dataTransfer.files[0] ?? null); });

  /**
   * Asks before a pack of the same name gets a new version: `filed` is the name it will be filed under, or null when
   * the server has refused an upload (`newPackOnly`) for that reason, said in `refusal`. Resolves to whether to go on.
   */
  async function confirmReplace(filed, refusal) {
    const existing = filed ? (await api('/v1/packs')).packs.find((p) => p.name.toLowerCase() === filed.toLowerCase()) : null;
    if (filed && !existing) return true;
    return new Promise((resolve) => {
      const named = existing ? `“${existing.name}”` : 'of that name';
      const yes = h('button', {type: 'button', class: 'primary', id: 'replace-yes'}, `Upload as a new version of ${existing ? named : 'it'}`);
      const no = h('button', {type: 'button', class: 'ghost', id: 'replace-no'}, 'Cancel');
      replace(confirmBox, h('p', {}, h('strong', {}, `A pack ${named} is already here`),
        existing ? ` (version ${existing.version ?? '–'}, ${plural(existing.assetCount, 'asset')}, group ${existing.group}). ` : ` (${refusal}). `,
        'Uploading replaces what people browse with this archive; its older version is kept. To file it separately, type another name above.'),
        h('p', {class: 'actions'}, yes, no));
      confirmBox.hidden = false;
      yes.addEventListener('click', () => { confirmBox.hidden = true; resolve(true); });
      no.addEventListener('click', () => { confirmBox.hidden = true; go.focus(); resolve(false); });
      yes.focus();
    });
  }

  function setBar(node, fill, percent) {
    fill.style.width = `${percent}%`;
    node.setAttribute('aria-valuenow', String(percent));
  }

  go.addEventListener('click', async () => {
    if (!selected) return;
    const picked = selected;
    go.disabled = true;
    setBar(progress, bar, 0);
    let asked = false;
    try {
      const filed = (await predict())?.name;
      asked = Boolean(filed && (await api('/v1/packs')).packs.some((p) => p.name.toLowerCase() === filed.toLowerCase()));
      if (asked && !(await confirmReplace(filed))) { go.disabled = false; return; }
    } catch (error) {
      status.textContent = `Cannot check the pack names: ${error.message}`;
      go.disabled = false;
      return;
    }
    progress.hidden = false;
    progress.classList.remove('failed');
    importProgressBar.hidden = true;
    setBar(importProgressBar, importBar, 0);
    cancel.hidden = false;
    replace(out);
    const started = performance.now();
    const id = progressId();
    const entries = entryTotal;
    let following = null;
    const follow = () => {
      importProgressBar.hidden = false;
      following = setInterval(async () => {
        const now = await importProgress(id).catch(() => null);
        if (!now || !upload) return;
        const percent = entries > 0 ? Math.min(100, Math.round((now.entries / entries) * 100))
          : now.bytesTotal > 0 ? Math.min(100, Math.round((now.bytesDone / now.bytesTotal) * 100)) : 0;
        setBar(importProgressBar, importBar, now.phase === 'reading' ? percent : now.phase === 'receiving' ? 0 : 100);
        const read = entries > 0 ? `${now.entries} of ${entries} entries read` : `${now.entries} entries read, ${percent}% of the archive`;
        status.textContent = now.phase === 'reading' && entries > 0 && now.entries >= entries
          ? `The server has read all ${entries} entries and is checking the pictures…`
          : `The server is ${PHASES[now.phase] ?? now.phase}: ${read}…`;
      }, 400);
    };
    const setProgress = (sent, total, done) => {
      const percent = total > 0 ? Math.round((sent / total) * 100) : 0;
      setBar(progress, bar, percent);
      const seconds = (performance.now() - started) / 1000;
      const rate = seconds > 0 ? `${bytes(Math.round(sent / seconds))}/s` : '';
      if (done && !following) {
        status.textContent = `Sent ${bytes(total)}; the server is checking and importing the pack…`;
        follow();
      } else if (!done) {
        status.textContent = `${percent}% · ${bytes(sent)} of ${bytes(total)} ${rate ? '· ' + rate : ''}`;
      }
    };
    setProgress(0, picked.size);
    try {
      // Unless the question was asked, the server refuses to add a version to a pack already here (the name may differ
      // from the prediction: a tar's pack.json is read only there); then the question is asked and the archive sent again.
      const send = (newPackOnly) => uploadPack(picked, {name: name.value.trim(), fileName: picked.name, progress: id,
        newPackOnly: newPackOnly ? 'true' : undefined}, setProgress);
      upload = send(!asked);
      let result = await upload.done;
      if (!asked && result.status === 409 && result.body?.error?.problems?.some((p) => p.code === 'PACK_CONFLICT')) {
        const refusal = result.body.error.problems.find((p) => p.code === 'PACK_CONFLICT').message;
        progress.hidden = true;
        status.textContent = '';
        if (!(await confirmReplace(null, refusal))) { clearForm(); return; }
        progress.hidden = false;
        upload = send(false);
        result = await upload.done;
      }
      progress.classList.toggle('failed', result.status >= 400);
      if (result.status < 400) setBar(importProgressBar, importBar, 100);
      status.textContent = result.body?.error?.code === 'IMPORT_CANCELLED' ? 'Cancelled: the server stopped the import and stored nothing.'
        : result.status >= 400 ? `Sent ${bytes(picked.size)}; the pack was refused.` : `Sent ${bytes(picked.size)} and imported.`;
      if (result.status < 400) forgetBrowse();
      replace(out, report(result.status, result.body));
      clearForm();
    } catch (error) {
      progress.classList.add('failed');
      status.textContent = error.message;
    } finally {
      clearInterval(following);
      upload = null;
      cancel.hidden = true;
      go.disabled = !selected;
    }
  });
  cancel.addEventListener('click', () => upload?.cancel());

  replace(main, h('section', {class: 'upload'},
    h('h1', {}, 'Upload a pack'),
    h('div', {class: 'card'},
      drop, chosen,
      h('div', {class: 'row'},
        h('label', {for: 'pack-name'}, 'Pack name ', h('span', {class: 'muted'}, '(optional; wins over pack.json)')), name, filedAs),
      confirmBox,
      h('p', {class: 'actions start'}, go, cancel), progress, importProgressBar, status),
    out,
    h('details', {class: 'card help'}, h('summary', {}, 'How to make a pack'),
      h('pre', {}, 'pack.json                  optional: name, version, author, license, tilePixels\n' +
        'tokens/goblin.png          a 1×1 token\ntokens/ogre_2x2.png        a 2×2 token\n' +
        'tokens/dragon [4x4]@2x.png @2x: twice the base resolution\nobjects/door_1x2.png       objects, textures, walls, backgrounds\n' +
        'textures/stone-floor.png   floor textures drawn into one tile'))));
}
