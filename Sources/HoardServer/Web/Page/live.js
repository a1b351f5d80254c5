// A session's live channel in the browser, as HoardClient.LiveChannel speaks it: ordered events, reconnection from
// the last sequence number (`since`), and ops that wait while the channel is down and are sent again after every
// reconnection until the server answers them (it applies an op id once).
//
// A browser's WebSocket cannot send an Authorization header: the token rides in the subprotocol list
// (`hoard.bearer.<token>`, next to `hoard.live`, which the server answers), never in the URL.

const FIRST_RETRY = 250;
const MAX_RETRY = 10000;

export class LiveChannel {
  /**
   * onEvent(event) for every event in order; onStatus('connected' | 'reconnecting' | 'ended', detail).
   * `since`: the `seq` of the session document the page drew; `name`: a member's display name at the table (the
   * host's: never their token's label), sent at each connection.
   */
  constructor({sessionId, token, since, name, onEvent, onStatus}) {
    Object.assign(this, {sessionId, token, lastSeq: since, name, onEvent, onStatus});
    this.pending = new Map();  // opId → {text, resolve, reject}, oldest first
    this.retry = FIRST_RETRY;
    this.closed = false;
    this.connections = 0;
    this.connect();
  }

  url() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const params = new URLSearchParams();
    if (Number.isInteger(this.lastSeq)) params.set('since', String(this.lastSeq));
    if (this.name) params.set('name', this.name);
    const query = params.size ? `?${params}`.replaceAll('+', '%20') : '';
    return `${scheme}://${location.host}/v1/sessions/${encodeURIComponent(this.sessionId)}/live${query}`;
  }

  connect() {
    const socket = new WebSocket(this.url(), ['hoard.live', `hoard.bearer.${this.token}`]);
    this.socket = socket;
    let opened = false;
    socket.addEventListener('open', () => {
      opened = true;
      this.connections += 1;
      this.retry = FIRST_RETRY;
      this.onStatus('connected');
      for (const {text} of this.pending.values()) socket.send(text);
    });
    socket.addEventListener('message', (message) => {
      let event;
      try { event = JSON.parse(message.data); } catch { return; }
      if (Number.isInteger(event.seq)) {
        // A sequenced event at or before what the page holds is a repeat (a backlog overlapping): skip it.
        if (Number.isInteger(this.lastSeq) && event.seq <= this.lastSeq && event.type !== 'snapshot') return;
        this.lastSeq = event.seq;
      }
      this.settle(event);
      this.onEvent(event);
    });
    socket.addEventListener('close', async (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closed) return;
      // The server's word that the seat is gone: the host removed this player (4403), their token was revoked (4401),
      // or the host ended the game (1001).
      const ended = close.code === 4403 ? 'the host removed you from the table'
        : close.code === 4401 ? 'your token was revoked; ask an owner of the group for a new invitation'
        : close.code === 1001 && /session ended/.test(close.reason) ? 'the host ended the game' : null;
      if (ended) return this.end(ended);
      // A refused reconnection says nothing to a page: ask the session whether the seat still exists.
      if (!opened) {
        const seat = await fetch(`/v1/sessions/${encodeURIComponent(this.sessionId)}`,
          {headers: {Authorization: `Bearer ${this.token}`}, credentials: 'omit'}).then((r) => r.status, () => 0);
        if (seat === 401 || seat === 404) return this.end('the game has ended, or you were removed from it');
      }
      this.onStatus('reconnecting', opened ? `the connection dropped (${close.code})` : 'the server cannot be reached');
      if (this.held) return;
      setTimeout(() => { if (!this.closed) this.connect(); }, this.retry);
      this.retry = Math.min(MAX_RETRY, this.retry * 2);
    });
  }

  /** Answers a waiting op: its own `op` event, an `ack` of a repeat, or an `error` naming it. */
  settle(event) {
    const waiting = event.opId ? this.pending.get(event.opId) : null;
    if (!waiting) return;
    if (event.type === 'op' || event.type === 'ack' || event.type === 'ping') {
      this.pending.delete(event.opId);
      waiting.resolve(event);
    } else if (event.type === 'error') {
      this.pending.delete(event.opId);
      waiting.reject(Object.assign(new Error(event.message ?? 'the table refused it'), {code: event.code}));
    }
  }

  /** Sends an op; resolves with the server's answer, rejects with its refusal (`code`, message). */
  send(op) {
    const opId = crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const text = JSON.stringify({type: 'op', opId, op});
    return new Promise((resolve, reject) => {
      this.pending.set(opId, {text, resolve, reject});
      if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(text);
    });
  }

  /** Sends a message that is not an op (a clock probe) when the channel is open; dropped otherwise. */
  raw(message) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** Drops the connection as a network failure would, and stays away until resume() (then reconnects with `since`). */
  drop() {
    this.held = true;
    this.socket?.close(4000, 'dropped by the page');
  }

  resume() {
    this.held = false;
    if (!this.socket && !this.closed) this.connect();
  }

  /** The seat is gone: no more reconnecting; waiting ops are refused. */
  end(why) {
    this.closed = true;
    for (const waiting of this.pending.values()) waiting.reject(Object.assign(new Error(why), {code: 'ENDED'}));
    this.pending.clear();
    this.onStatus('ended', why);
  }

  close() {
    this.closed = true;
    this.socket?.close(1000);
    this.onStatus('ended');
  }
}
