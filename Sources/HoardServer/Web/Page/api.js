// Talking to the Hoard API. The member's token lives in sessionStorage (this tab only, gone when it closes) and is
// sent as an Authorization header: never in a URL, never in a cookie. Pictures are fetched with the same header
// and shown through object URLs.

const TOKEN_KEY = 'hoard.token';

export const auth = {
  get token() { return sessionStorage.getItem(TOKEN_KEY); },
  signIn(token) { sessionStorage.setItem(TOKEN_KEY, token); },
  signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    for (const url of pictureURLs.values()) url.then((u) => URL.revokeObjectURL(u), () => {});
    pictureURLs.clear();
  },
};

/** An error answer of the API: its HTTP status, code, message and the body's extras (problems, missing). */
export class APIError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.message ?? `the server answered ${status}`);
    this.status = status;
    this.code = error.code ?? 'HTTP_' + status;
    this.problems = error.problems ?? [];
  }
}

function headers(extra = {}) {
  const token = auth.token;
  return token ? {...extra, Authorization: `Bearer ${token}`} : extra;
}

function signedOut(status) {
  if (status === 401 && auth.token) {
    auth.signOut();
    window.dispatchEvent(new CustomEvent('hoard:signed-out'));
  }
}

/** The server could not be reached at all (it is down, or the network is): the page offers to retry. */
export class OfflineError extends Error {
  constructor() {
    super('Hoard’s server cannot be reached. Check that it is running and that you are online, then retry.');
    this.status = 0;
    this.code = 'OFFLINE';
  }
}

/** fetch, with a network failure turned into an OfflineError. */
async function reach(path, init) {
  try {
    return await fetch(path, init);
  } catch (error) {
    if (error?.name === 'AbortError') throw error;
    throw new OfflineError();
  }
}

/** A JSON request; resolves to the parsed body (null for 204), rejects with APIError or OfflineError. */
export async function api(path, {method = 'GET', json, token} = {}) {
  const init = {method, headers: headers(json === undefined ? {} : {'Content-Type': 'application/json'}), credentials: 'omit'};
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (json !== undefined) init.body = JSON.stringify(json);
  const response = await reach(path, init);
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    if (!token) signedOut(response.status);
    throw new APIError(response.status, body);
  }
  return body;
}

/** Uploads a picture into the member's own space (POST /v1/uploads); resolves to the stored upload (its digest). */
export async function uploadPicture(file) {
  const response = await reach('/v1/uploads', {method: 'POST', headers: headers({'Content-Type': file.type || 'application/octet-stream'}),
    body: file, credentials: 'omit'});
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new APIError(response.status, body);
  return body;
}

/** Query string from an object, skipping empty values; spaces as %20 (the server does not read + as a space). */
export function query(values) {
  const pairs = Object.entries(values).filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  return pairs.length ? `?${pairs.join('&')}` : '';
}

// Picture fetches: at most six at a time (a browser's connections per host), each digest fetched once per page.
const pictureURLs = new Map();
const waiting = [];
let running = 0;

function pump() {
  while (running < 6 && waiting.length > 0) {
    const job = waiting.shift();
    running += 1;
    job().finally(() => { running -= 1; pump(); });
  }
}

/** An object URL for a blob the caller may read, fetched with the token. `path` defaults to /v1/blobs/{digest}. */
export function pictureURL(digest, path = `/v1/blobs/${digest}`) {
  const key = path;
  if (!pictureURLs.has(key)) {
    const promise = new Promise((resolve, reject) => {
      waiting.push(async () => {
        try {
          const response = await reach(path, {headers: headers(), credentials: 'omit'});
          if (!response.ok) throw new APIError(response.status, await response.json().catch(() => null));
          resolve(URL.createObjectURL(await response.blob()));
        } catch (error) {
          pictureURLs.delete(key);
          reject(error);
        }
      });
      pump();
    });
    pictureURLs.set(key, promise);
  }
  return pictureURLs.get(key);
}

// Grid pictures come in batches (POST /v1/blobs/batch): those that scroll into view in the same moment share one
// request, so a screen of 40 thumbnails costs one round trip instead of 40 (at most six at once per host).
let batch = [];

/** An object URL for a small picture (a thumbnail or a small variant), fetched in a batch with its neighbours. */
export function batchedPictureURL(digest, mediaType) {
  const key = `/v1/blobs/${digest}`;
  if (!pictureURLs.has(key)) {
    const promise = new Promise((resolve, reject) => {
      if (batch.length === 0) setTimeout(flushBatch, 0);
      batch.push({digest, mediaType, resolve, reject});
    });
    promise.catch(() => pictureURLs.delete(key));
    pictureURLs.set(key, promise);
  }
  return pictureURLs.get(key);
}

function flushBatch() {
  const jobs = batch.splice(0, batch.length);
  for (let start = 0; start < jobs.length; start += 200) {
    const chunk = jobs.slice(start, start + 200);
    waiting.push(() => fetchBatch(chunk));
  }
  pump();
}

/** One batch: `sha256:<hex> <size>\n<bytes>\n` per blob; `-` (not readable) and `>` (too large) fall back to a GET. */
async function fetchBatch(jobs) {
  try {
    const response = await reach('/v1/blobs/batch', {method: 'POST', credentials: 'omit',
      headers: headers({'Content-Type': 'application/json'}), body: JSON.stringify({digests: jobs.map((job) => job.digest)})});
    if (!response.ok) throw new APIError(response.status, await response.json().catch(() => null));
    const bytes = new Uint8Array(await response.arrayBuffer());
    let at = 0;
    for (const job of jobs) {
      const end = bytes.indexOf(10, at);
      if (end < 0) throw new Error('the batch was cut short');
      const [digest, size] = new TextDecoder().decode(bytes.subarray(at, end)).split(' ');
      at = end + 1;
      if (digest !== job.digest) throw new Error('the batch answered out of order');
      if (size === '-' || size === '>') {
        job.done = true;
        pictureURLs.delete(`/v1/blobs/${job.digest}`);
        pictureURL(job.digest).then(job.resolve, job.reject);
        continue;
      }
      const length = Number(size);
      job.resolve(URL.createObjectURL(new Blob([bytes.subarray(at, at + length)], {type: job.mediaType ?? ''})));
      job.done = true;
      at += length + 1;
    }
  } catch {
    // A batch that failed (refused, cut short): each picture it did not give is asked for on its own.
    for (const job of jobs.filter((j) => !j.done)) {
      pictureURLs.delete(`/v1/blobs/${job.digest}`);
      pictureURL(job.digest).then(job.resolve, job.reject);
    }
  }
}

/**
 * The pictures an asset listing or descriptor names that an <img> can show: its generated thumbnail and preview and
 * its variants (a WebM video is left out), smallest first.
 */
export function pictures(asset) {
  const renditions = [asset.thumbnail, asset.preview].filter((r) => r && typeof r === 'object');
  return [...renditions, ...(asset.variants ?? [])].filter((p) => p.mediaType !== 'video/webm' && p.width && p.height)
    .sort((a, b) => a.width * a.height - b.width * b.height);
}

/**
 * The smallest picture whose longer side covers `devicePixels` (a tile's width in device pixels), else the largest:
 * sharp on a 2× tablet, light on a desktop.
 */
export function pictureFor(asset, devicePixels) {
  const candidates = pictures(asset);
  return candidates.find((p) => Math.max(p.width, p.height) >= devicePixels) ?? candidates[candidates.length - 1];
}

/** Loads a picture into an <img>-like Image, resolving when it can be drawn. */
export async function loadImage(digest) {
  const url = await pictureURL(digest);
  const image = new Image();
  image.src = url;
  await image.decode();
  return image;
}

/**
 * Uploads a pack with XMLHttpRequest so the upload's progress can be shown: onProgress(sent, total, done) as bytes
 * leave. `params` are the query's (name, fileName, progress). Returns {done, cancel}: `done` resolves to
 * {status, body} once the server has imported (or refused) the archive; `cancel()` stops the upload, or, once the
 * archive is sent, asks the server to stop its import (`DELETE /v1/imports/{progress}`): the upload is then answered
 * 409 IMPORT_CANCELLED with nothing stored, or imported when the server was already publishing.
 */
export function uploadPack(file, params, onProgress) {
  const request = new XMLHttpRequest();
  let sent = false;
  const done = new Promise((resolve, reject) => {
    request.open('POST', '/v1/packs' + query(params));
    for (const [key, value] of Object.entries(headers({'Content-Type': 'application/octet-stream'}))) request.setRequestHeader(key, value);
    request.upload.addEventListener('progress', (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size));
    request.upload.addEventListener('load', () => { sent = true; onProgress(file.size, file.size, true); });
    request.addEventListener('load', () => {
      let body = null;
      try { body = JSON.parse(request.responseText); } catch { body = null; }
      signedOut(request.status);
      resolve({status: request.status, body});
    });
    request.addEventListener('error', () => reject(new Error('The connection to the server failed during the upload. Check the server is running, then upload again.')));
    request.addEventListener('abort', () => reject(new Error('Cancelled; the archive was not sent, nothing was stored.')));
    request.send(file);
  });
  const stopImport = () => fetch(`/v1/imports/${encodeURIComponent(params.progress)}`, {method: 'DELETE', headers: headers(), credentials: 'omit'});
  return {done, cancel: () => (sent && params.progress ? stopImport().catch(() => request.abort()) : request.abort())};
}

/** How far the server's import of an upload that named `id` has got; null once it has answered. */
export async function importProgress(id) {
  const response = await fetch(`/v1/imports/${encodeURIComponent(id)}`, {headers: headers(), credentials: 'omit'});
  return response.ok ? response.json() : null;
}

/** The smallest variant of an asset listing or descriptor, or its thumbnail when a processor made one. */
export function thumbnailDigest(asset) {
  if (asset.thumbnail) return typeof asset.thumbnail === 'string' ? asset.thumbnail : asset.thumbnail.digest;
  // An <img> cannot show a WebM video: a video without a generated thumbnail shows none.
  const variants = [...(asset.variants ?? [])].filter((v) => v.mediaType !== 'video/webm').sort((a, b) => a.width * a.height - b.width * b.height);
  return variants[0]?.digest;
}
