// Pictures of the live table, fetched by the client library's rules: a blob named by its digest never changes, so
// once verified it is kept forever. Small blobs travel together in POST /v1/blobs/batch (each verified against its
// digest, then kept in the Cache Storage under its GET address); larger ones are GET on their own, where the HTTP
// cache keeps them (`Cache-Control: immutable`). Every picture is decoded once into an ImageBitmap.

const BATCH_BELOW = 256 * 1024;   // as HoardClient's batchThreshold
const BATCH_MAX = 1000;           // the server's limit per batch
const PARALLEL = 6;               // a browser's connections per host
const CACHE = 'hoard-blobs-v1';

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');

/** Finds `\n` in bytes from `start`; -1 when absent. */
function newline(bytes, start) {
  for (let i = start; i < bytes.length; i++) if (bytes[i] === 10) return i;
  return -1;
}

/** The records of a batch answer: [{digest, bytes}] for blobs, [{digest, missing|tooLarge}] otherwise. */
export function parseBatch(bytes) {
  const records = [];
  let at = 0;
  const text = new TextDecoder();
  while (at < bytes.length) {
    const end = newline(bytes, at);
    if (end < 0) throw new Error('the batch answer was cut inside a header');
    const [digest, size] = text.decode(bytes.subarray(at, end)).split(' ');
    at = end + 1;
    if (size === '-') records.push({digest, missing: true});
    else if (size === '>') records.push({digest, tooLarge: true});
    else {
      const count = Number(size);
      if (!Number.isInteger(count) || at + count > bytes.length) throw new Error('the batch answer was cut inside a blob');
      records.push({digest, bytes: bytes.slice(at, at + count)});
      at += count + 1;
    }
  }
  return records;
}

/**
 * A loader for one token: `picture(variant)` resolves to an ImageBitmap of the variant ({digest, size, mediaType}).
 * Requests made in the same task are gathered, so the first drawing of a map costs a handful of batches.
 */
export function blobLoader(token) {
  const bitmaps = new Map();
  let queued = [];
  let running = 0;
  const jobs = [];
  const stats = {batches: 0, gets: 0, cached: 0, bytes: 0, verified: 0, kept: 0};
  const canVerify = Boolean(globalThis.crypto?.subtle);
  const cacheStorage = globalThis.caches && window.isSecureContext ? caches.open(CACHE).catch(() => null) : Promise.resolve(null);
  const auth = {Authorization: `Bearer ${token}`};

  const pump = () => {
    while (running < PARALLEL && jobs.length) {
      running += 1;
      jobs.shift()().finally(() => { running -= 1; pump(); });
    }
  };
  const decode = (blob) => createImageBitmap(blob);

  async function get(item) {
    stats.gets += 1;
    const response = await fetch(`/v1/blobs/${item.digest}`, {headers: auth, credentials: 'omit'});
    if (!response.ok) throw new Error(`the server answered ${response.status} for ${item.digest}`);
    const blob = await response.blob();
    stats.bytes += blob.size;
    return blob;
  }

  // Writing to the Cache Storage costs about as much as everything else of a first drawing: it waits until the page is
  // idle, and goes in slices of 50.
  const toKeep = [];
  let keeping = false;
  const idle = (work) => (globalThis.requestIdleCallback ? requestIdleCallback(work, {timeout: 5000}) : setTimeout(work, 500));
  function keep(digest, blob) {
    toKeep.push([digest, blob]);
    if (keeping) return;
    keeping = true;
    idle(async function slice() {
      const store = await cacheStorage;
      const part = toKeep.splice(0, 50);
      await Promise.all(part.map(([d, b]) => store.put(`/v1/blobs/${d}`, new Response(b, {headers: {'Content-Type': b.type}})).catch(() => {})));
      stats.kept += part.length;
      if (toKeep.length) idle(slice); else keeping = false;
    });
  }

  async function verified(digest, bytes) {
    const sum = 'sha256:' + hex(await crypto.subtle.digest('SHA-256', bytes));
    if (sum !== digest) throw new Error(`a blob did not match its digest ${digest}`);
  }

  async function batch(items) {
    stats.batches += 1;
    const response = await fetch('/v1/blobs/batch', {method: 'POST', credentials: 'omit',
      headers: {...auth, 'Content-Type': 'application/json'}, body: JSON.stringify({digests: items.map((i) => i.digest)})});
    if (!response.ok) throw new Error(`the batch read answered ${response.status}`);
    const records = parseBatch(new Uint8Array(await response.arrayBuffer()));
    const byDigest = new Map(items.map((item) => [item.digest, item]));
    const store = await cacheStorage;
    // Every blob is hashed at once (WebCrypto works off the main thread), then handed over as it checks out.
    await Promise.all(records.map(async (record) => {
      const item = byDigest.get(record.digest);
      if (!item) return;
      byDigest.delete(record.digest);
      if (record.bytes) {
        try {
          await verified(record.digest, record.bytes);
          stats.verified += 1;
          const blob = new Blob([record.bytes], {type: item.mediaType ?? ''});
          stats.bytes += blob.size;
          if (store) keep(record.digest, blob);
          item.resolve(blob);
        } catch (error) { item.reject(error); }
      } else if (record.tooLarge) {
        jobs.push(() => get(item).then(item.resolve, item.reject));
      } else item.reject(new Error(`${record.digest} is not readable here`));
    }));
    for (const item of byDigest.values()) item.reject(new Error(`the batch answer left out ${item.digest}`));
    pump();
  }

  async function flush() {
    const items = queued;
    queued = [];
    const store = await cacheStorage;
    const small = [];
    // One listing of what is kept, then a lookup only for those: a cold cache costs one call, not one per blob.
    const names = store ? new Set((await store.keys().catch(() => [])).map((request) => new URL(request.url).pathname)) : new Set();
    const kept = await Promise.all(items.map((item) => (names.has(`/v1/blobs/${item.digest}`) ? store.match(`/v1/blobs/${item.digest}`).catch(() => null) : null)));
    for (const [index, item] of items.entries()) {
      if (kept[index]) { stats.cached += 1; item.resolve(kept[index].blob()); continue; }
      if (canVerify && (item.size ?? Infinity) < BATCH_BELOW) small.push(item);
      else jobs.push(() => get(item).then(item.resolve, item.reject));
    }
    // Several batches side by side rather than one long one: the first pictures arrive sooner.
    const per = Math.min(BATCH_MAX, Math.max(50, Math.ceil(small.length / PARALLEL)));
    for (let i = 0; i < small.length; i += per) {
      const part = small.slice(i, i + per);
      jobs.push(() => batch(part).catch((error) => part.forEach((item) => item.reject(error))));
    }
    pump();
  }

  return {
    stats,
    /** An ImageBitmap of one variant; the same promise for the same digest. */
    picture(variant) {
      if (!bitmaps.has(variant.digest)) {
        const promise = new Promise((resolve, reject) => {
          if (queued.length === 0) queueMicrotask(() => { flush(); });
          queued.push({digest: variant.digest, size: variant.size, mediaType: variant.mediaType, resolve, reject});
        }).then(decode);
        promise.catch(() => bitmaps.delete(variant.digest));
        bitmaps.set(variant.digest, promise);
      }
      return bitmaps.get(variant.digest);
    },
  };
}
