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

/** A JSON request; resolves to the parsed body (null for 204), rejects with APIError. */
export async function api(path, {method = 'GET', json, token} = {}) {
  const init = {method, headers: headers(json === undefined ? {} : {'Content-Type': 'application/json'}), credentials: 'omit'};
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (json !== undefined) init.body = JSON.stringify(json);
  const response = await fetch(path, init);
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    if (!token) signedOut(response.status);
    throw new APIError(response.status, body);
  }
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
          const response = await fetch(path, {headers: headers(), credentials: 'omit'});
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

/** Loads a picture into an <img>-like Image, resolving when it can be drawn. */
export async function loadImage(digest) {
  const url = await pictureURL(digest);
  const image = new Image();
  image.src = url;
  await image.decode();
  return image;
}

/**
 * Uploads a pack with XMLHttpRequest so the upload's progress can be shown: onProgress(sent, total) as bytes
 * leave, then resolves to {status, body} once the server has imported (or refused) the archive.
 */
export function uploadPack(file, name, onProgress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', '/v1/packs' + query({name}));
    for (const [key, value] of Object.entries(headers({'Content-Type': 'application/octet-stream'}))) request.setRequestHeader(key, value);
    request.upload.addEventListener('progress', (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size));
    request.upload.addEventListener('load', () => onProgress(file.size, file.size, true));
    request.addEventListener('load', () => {
      let body = null;
      try { body = JSON.parse(request.responseText); } catch { body = null; }
      signedOut(request.status);
      resolve({status: request.status, body});
    });
    request.addEventListener('error', () => reject(new Error('the connection to the server failed during the upload')));
    request.addEventListener('abort', () => reject(new Error('the upload was cancelled')));
    request.send(file);
  });
}

/** The smallest variant of an asset listing or descriptor, or its thumbnail when a processor made one. */
export function thumbnailDigest(asset) {
  if (asset.thumbnail) return typeof asset.thumbnail === 'string' ? asset.thumbnail : asset.thumbnail.digest;
  // An <img> cannot show a WebM video: a video without a generated thumbnail shows none.
  const variants = [...(asset.variants ?? [])].filter((v) => v.mediaType !== 'video/webm').sort((a, b) => a.width * a.height - b.width * b.height);
  return variants[0]?.digest;
}
