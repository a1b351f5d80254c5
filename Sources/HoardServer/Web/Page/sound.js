// The table's sound: every seat plays what the host's jukebox plays, at the same moment. The server stamps each
// play, pause, stop and volume op with its clock (`serverTime`); this page learns its offset to that clock over the
// live channel (`{"type":"time","t0"}` probes, the answer with the least round trip kept, as NTP does), and a
// playing channel is at `offset + (serverNow − since) / 1000` seconds, a looping one wrapped at its duration. Four
// times a second every channel is checked: a drift past 10 ms is played away at up to ±10 % speed, one past 250 ms
// (or a start, a pause) is sought (not while a seek is still under way). Browsers need one click before
// a page may play sound: until then an "Allow sound" button shows.
import {h, replace} from './dom.js';

/** Drift (s) played away by a changed rate; past JUMP it is sought; within STEADY it is left alone. */
const STEADY = 0.01;
const JUMP = 0.25;
const PROBES = 6;

/** An element to ask what this browser plays. */
let prober = null;

/**
 * What a seat plays of an audio asset: its sound, or its `compatible` rendition (AAC in M4A, made by the
 * aac-rendition plugin) when this browser cannot play the sound's own type (`canPlayType` empty: Safari and Ogg).
 */
export function playableSound(asset) {
  const sound = asset?.variants?.[0];
  prober ??= document.createElement('audio');
  if (sound && asset.compatible && !prober.canPlayType(sound.mediaType)) return asset.compatible;
  return sound;
}

/** Mirrors the server's Table.apply for jukebox ops on the map document's `audio` member (AudioChannel). */
export function applyAudioOp(map, op) {
  const channels = map.audio ?? (map.audio = {});
  const now = op.serverTime ?? 0;
  const position = (c) => (c.paused ? c.offset : c.offset + Math.max(0, now - c.since) / 1000);
  const channel = channels[op.channel];
  switch (op.kind) {
  case 'play':
    if (op.track) {
      channels[op.channel] = {track: op.track, loop: op.loop === true, volume: op.volume ?? 1, offset: op.offset ?? 0, since: now,
        paused: false, at: op.at, radius: op.radius, to: op.to};
    } else if (channel) {
      if (channel.paused) Object.assign(channel, {since: now, paused: false});
      if (op.volume !== undefined) channel.volume = op.volume;
    }
    break;
  case 'pause':
    if (channel && !channel.paused) Object.assign(channel, {offset: position(channel), since: now, paused: true});
    break;
  case 'stop':
    delete channels[op.channel];
    break;
  case 'volume':
    if (channel) channel.volume = op.volume;
    break;
  default:
    break;
  }
}

/** An event's `audio`, what this seat starts or stops hearing (a token moved, a door opened): id → channel, or null. */
export function applyHeard(map, heard) {
  const channels = map.audio ?? (map.audio = {});
  for (const [id, channel] of Object.entries(heard)) {
    if (channel) channels[id] = channel; else delete channels[id];
  }
}

/** Plays a table's channels. `live`: the LiveChannel; `soundURL(track)`: a promise of a playable URL for a track. */
export class TableSound {
  constructor({live, soundURL, container}) {
    Object.assign(this, {live, soundURL});
    this.offset = 0;        // server clock − this page's clock, in ms
    this.bestTrip = Infinity;
    this.players = new Map();  // channel id → {audio, track, url}
    this.channels = {};
    this.allowed = false;
    this.allow = h('button', {type: 'button', id: 'allow-sound', class: 'primary', hidden: true}, '🔊 Allow sound');
    this.allow.addEventListener('click', () => { this.allowed = true; this.allow.hidden = true; this.sync(); });
    replace(container, this.allow);
    this.timer = setInterval(() => this.sync(), 250);
  }

  /** Sends clock probes (after each connection): a few, spaced, so one slow answer does not set the offset. */
  probe() {
    for (let i = 0; i < PROBES; i += 1) setTimeout(() => this.live.raw({type: 'time', t0: Date.now()}), i * 150);
  }

  /** A `time` answer: keeps the offset of the probe with the shortest round trip. */
  onTime(event) {
    const t1 = Date.now();
    const trip = t1 - event.t0;
    if (trip < 0 || trip > this.bestTrip) return;
    this.bestTrip = trip;
    this.offset = event.serverTime - (event.t0 + t1) / 2;
    this.sync();
  }

  /** The server's clock now, in ms. */
  serverNow() { return Date.now() + this.offset; }

  /** The channels as the table now holds them (the map's `audio`). */
  update(channels) {
    this.channels = channels ?? {};
    for (const [id, player] of this.players) {
      if (!this.channels[id]) { player.audio.pause(); this.players.delete(id); }
    }
    this.sync();
  }

  /** Where a channel should be now, in seconds. */
  expected(channel, duration) {
    const at = channel.paused ? channel.offset : channel.offset + Math.max(0, this.serverNow() - channel.since) / 1000;
    return channel.loop && duration > 0 ? at % duration : at;
  }

  async sync() {
    for (const [id, channel] of Object.entries(this.channels)) {
      let player = this.players.get(id);
      if (!player || player.track !== channel.track) {
        player?.audio.pause();
        player = {audio: new Audio(), track: channel.track};
        player.audio.dataset.channel = id;
        player.audio.preload = 'auto';
        this.players.set(id, player);
        this.soundURL(channel.track).then((url) => { player.audio.src = url; this.sync(); }, () => {});
      }
      const audio = player.audio;
      if (!audio.src || audio.readyState < 1 || audio.seeking) continue;
      audio.loop = channel.loop;
      audio.volume = Math.max(0, Math.min(1, channel.volume ?? 1));
      const want = this.expected(channel, audio.duration);
      if (!channel.loop && Number.isFinite(audio.duration) && want >= audio.duration) { audio.pause(); continue; }
      const drift = audio.currentTime - want;  // > 0: ahead of the table
      if (channel.paused || audio.paused || Math.abs(drift) > JUMP) {
        if (Math.abs(drift) > STEADY) audio.currentTime = want;
        audio.playbackRate = 1;
      } else {
        // A small drift is played away, a little faster or slower (the pitch is kept), rather than sought: a seek stalls.
        audio.playbackRate = Math.abs(drift) > STEADY ? Math.max(0.9, Math.min(1.1, 1 - drift * 2)) : 1;
      }
      if (channel.paused) { audio.pause(); continue; }
      if (audio.paused) {
        audio.play().then(() => { this.allowed = true; this.allow.hidden = true; }, (error) => {
          if (error?.name === 'NotAllowedError') this.allow.hidden = false;
        });
      }
    }
  }

  /** Where each channel's player is now: what the page's tests compare across seats. */
  positions() {
    return Object.fromEntries([...this.players].map(([id, p]) => [id, {time: p.audio.currentTime, paused: p.audio.paused}]));
  }

  close() {
    clearInterval(this.timer);
    for (const player of this.players.values()) player.audio.pause();
  }
}

/** The host's jukebox: the group's sounds, a channel, loop and volume, and play, pause, resume and stop. */
export function jukebox({request, send, refused}) {
  const track = h('select', {id: 'jukebox-track', 'aria-label': 'Sound to play'});
  const channel = h('select', {id: 'jukebox-channel', 'aria-label': 'Channel'},
    h('option', {value: 'music'}, 'Music'), h('option', {value: 'ambience'}, 'Ambience'));
  const loop = h('input', {type: 'checkbox', id: 'jukebox-loop', checked: true});
  const volume = h('input', {type: 'range', id: 'jukebox-volume', min: '0', max: '1', step: '0.05', value: '0.8', 'aria-label': 'Volume'});
  const button = (id, label) => h('button', {type: 'button', id}, label);
  const [play, pause, resume, stop] = [button('jukebox-play', 'Play'), button('jukebox-pause', 'Pause'), button('jukebox-resume', 'Resume'),
    button('jukebox-stop', 'Stop')];
  const go = (op, what) => send({channel: channel.value, ...op}).catch(refused(what));
  play.addEventListener('click', () => track.value && go({kind: 'play', track: track.value, loop: loop.checked, volume: Number(volume.value)}, 'the sound'));
  pause.addEventListener('click', () => go({kind: 'pause'}, 'the pause'));
  resume.addEventListener('click', () => go({kind: 'play'}, 'the sound'));
  stop.addEventListener('click', () => go({kind: 'stop'}, 'the stop'));
  volume.addEventListener('change', () => go({kind: 'volume', volume: Number(volume.value)}, 'the volume'));
  request('/v1/assets?kind=audio&limit=1000').then((listing) => {
    replace(track, (listing.assets ?? []).map((asset) => h('option', {value: asset.digest}, `${asset.name} · ${asset.pack}`)));
  }, () => {});
  return h('div', {id: 'jukebox', class: 'jukebox'},
    h('h3', {}, 'Jukebox'), track, h('div', {class: 'row'}, channel, h('label', {}, loop, ' Loop'), volume),
    h('div', {class: 'row'}, play, pause, resume, stop));
}
