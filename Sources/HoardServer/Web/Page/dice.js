// Dice at the table: the roll box (notation and quick buttons), rolls in the messages panel, the session's commitment
// and, once the seed is revealed, a button that recomputes every roll this page saw from it. The formula rules and the
// stream are HoardCore's (DiceFormula, DiceStream; DESIGN.md, "Dice"), written again here so that the page checks the
// server rather than asking it.
import {h, replace} from './dom.js';

const LIMITS = {length: 256, depth: 16, dice: 1000, sides: 1000000, extraDice: 1000, number: 1000000};
const QUICK = ['d4', 'd6', 'd8', 'd10', 'd12', 'd20', 'd%'];
// What holds a high-score record (DiceStatistics' `kind`).
const KINDS = {member: '(member)', player: '(player)', seat: '(this game only)'};

/** Parses a formula into a tree, as DiceParser does; throws an Error with `code` BAD_FORMULA or DICE_LIMIT. */
export function parseFormula(text) {
  const bytes = new TextEncoder().encode(text);
  const fail = (code, message) => Object.assign(new Error(message), {code});
  if (bytes.length > LIMITS.length) throw fail('DICE_LIMIT', 'formula too long');
  let pos = 0, depth = 0, dice = 0;
  const raw = () => (pos < bytes.length ? bytes[pos] : undefined);
  const skip = () => { while (bytes[pos] === 32) pos += 1; };
  const peek = () => { skip(); return raw(); };
  const is = (byte, char) => byte === char.charCodeAt(0);
  const take = (word) => {
    if (pos + word.length > bytes.length) return false;
    for (let i = 0; i < word.length; i += 1) {
      const w = word.charCodeAt(i);
      if ((bytes[pos + i] | (w >= 97 ? 0x20 : 0)) !== w) return false;
    }
    pos += word.length;
    return true;
  };
  const number = () => {
    const start = pos;
    while (pos < bytes.length && bytes[pos] >= 48 && bytes[pos] <= 57) pos += 1;
    if (pos === start) return null;
    const digits = String.fromCharCode(...bytes.subarray(start, pos)).replace(/^0+/, '');
    if (digits.length > String(LIMITS.number).length || Number(digits || '0') > LIMITS.number) throw fail('DICE_LIMIT', 'number too large');
    return Number(digits || '0');
  };
  const signed = () => {
    if (is(raw(), '-')) { pos += 1; const value = number(); if (value === null) throw fail('BAD_FORMULA', 'minus without a number'); return -value; }
    return number();
  };
  const condition = () => {
    for (const [spelling, comparison] of [['<=', '<='], ['>=', '>='], ['<', '<'], ['>', '>'], ['=', '=']]) {
      if (take(spelling)) { const value = signed(); if (value === null) throw fail('BAD_FORMULA', 'comparison without a number'); return {comparison, value}; }
    }
    const value = signed();
    return value === null ? null : {comparison: '=', value};
  };
  const everyFace = (term, c) => ({'=': term.lowest === term.highest && term.lowest === c.value, '<': term.highest < c.value,
    '>': term.lowest > c.value, '<=': term.highest <= c.value, '>=': term.lowest >= c.value})[c.comparison];
  // The explosion at the position, if any, with its style in `explosion.style`.
  const explosion = () => {
    if (take('!!')) explosion.style = 'compound';
    else if (take('!p')) explosion.style = 'penetrate';
    else if (take('!') || take('x')) explosion.style = take('o') ? 'once' : 'recursive';
    else return false;
    return true;
  };
  const modifier = (term) => {
    const keep = (kind) => {
      const count = number() ?? 1;
      if (count > term.count || term.keep) throw fail('BAD_FORMULA', 'bad keep or drop');
      term.keep = {kind, count};
    };
    if (take('kl')) keep('lowest');
    else if (take('kh') || take('k')) keep('highest');
    else if (take('dh')) keep('dropHighest');
    else if (take('dl')) keep('dropLowest');
    else if (take('rr') || take('r')) {
      const recursive = (bytes[pos - 2] | 0x20) === 114 && pos - 2 >= term.sidesEnd;
      const c = condition();
      if (term.reroll || !c) throw fail('BAD_FORMULA', 'bad reroll');
      if (everyFace(term, c)) throw fail('DICE_LIMIT', 'every face rerolls');
      term.reroll = {condition: c, recursive};
    } else if (explosion()) {
      if (term.explode) throw fail('BAD_FORMULA', 'explodes twice');
      const style = explosion.style;
      const c = condition() ?? {comparison: '=', value: term.highest};
      if (everyFace(term, c) && style !== 'once') throw fail('DICE_LIMIT', 'every face explodes');
      term.explode = {style, condition: c};
    } else if (take('cs') || take('cf')) {
      const key = is(bytes[pos - 1] | 0x20, 's') ? 'success' : 'failure';
      const c = condition();
      if (!c || term[key]) throw fail('BAD_FORMULA', 'bad cs or cf');
      term[key] = c;
    } else if (take('min') || take('max')) {
      const key = is(bytes[pos - 2] | 0x20, 'i') ? 'minimum' : 'maximum';
      const value = signed();
      if (value === null || term[key] !== undefined) throw fail('BAD_FORMULA', 'bad min or max');
      term[key] = value;
    } else throw fail('BAD_FORMULA', `cannot read byte ${pos}`);
  };
  const operand = () => {
    const start = pos;
    const count = number();
    if (!(is(raw(), 'd') || is(raw(), 'D'))) {
      if (count === null) throw fail('BAD_FORMULA', `cannot read byte ${pos}`);
      skip();
      return {number: count};
    }
    pos += 1;
    const term = {count: count ?? 1, lowest: 1, highest: 0};
    if (term.count < 1) throw fail('BAD_FORMULA', 'no dice');
    dice += term.count;
    if (dice > LIMITS.dice) throw fail('DICE_LIMIT', 'too many dice');
    if (is(raw(), '%')) { pos += 1; term.highest = 100; }
    else if (is(raw() | 0x20, 'f')) { pos += 1; term.lowest = -1; term.highest = 1; }
    else {
      const sides = number();
      if (sides === null || sides < 1) throw fail('BAD_FORMULA', 'no sides');
      if (sides > LIMITS.sides) throw fail('DICE_LIMIT', 'too many sides');
      term.highest = sides;
    }
    term.sidesEnd = pos;
    while (raw() !== undefined && 'kdrx!cm'.includes(String.fromCharCode(raw() | 0x20))) modifier(term);
    term.notation = new TextDecoder().decode(bytes.subarray(start, pos)).replaceAll(' ', '');
    skip();
    return {dice: term};
  };
  let sum = null;
  const unary = () => {
    depth += 1;
    try {
      if (depth > LIMITS.depth) throw fail('DICE_LIMIT', 'too deep');
      const next = peek();
      if (is(next, '-')) { pos += 1; skip(); return {negate: unary()}; }
      if (is(next, '+')) { pos += 1; skip(); return unary(); }
      if (is(next, '(')) {
        pos += 1; skip();
        const inner = sum();
        if (!is(peek(), ')')) throw fail('BAD_FORMULA', 'unclosed parenthesis');
        pos += 1; skip();
        return inner;
      }
      return operand();
    } finally { depth -= 1; }
  };
  const binary = (next, ops) => () => {
    let left = next();
    for (let op = peek(); op !== undefined && ops.includes(String.fromCharCode(op)); op = peek()) {
      pos += 1; skip();
      left = {op: String.fromCharCode(op), left, right: next()};
    }
    return left;
  };
  const product = binary(unary, '*/');
  sum = binary(product, '+-');
  skip();
  if (pos >= bytes.length) throw fail('BAD_FORMULA', 'empty formula');
  const tree = sum();
  if (pos !== bytes.length) throw fail('BAD_FORMULA', `cannot read byte ${pos}`);
  return tree;
}

/** Roll `index`'s stream under `seed` (32 bytes), as DiceStream draws it: HMAC-SHA256(seed, index ‖ block), 4 bytes a try. */
async function stream(seed, index) {
  const key = await crypto.subtle.importKey('raw', seed, {name: 'HMAC', hash: 'SHA-256'}, false, ['sign']);
  let block = 0, words = null, used = 8;
  return async (count) => {
    const bound = Math.floor(2 ** 32 / count) * count;
    for (;;) {
      if (used === 8) {
        const message = new DataView(new ArrayBuffer(16));
        message.setBigUint64(0, BigInt(index));
        message.setBigUint64(8, BigInt(block));
        words = new DataView(await crypto.subtle.sign('HMAC', key, message.buffer));
        block += 1;
        used = 0;
      }
      const value = words.getUint32(used * 4);
      used += 1;
      if (value < bound) return value % count;
    }
  };
}

const matches = (c, face) => ({'=': face === c.value, '<': face < c.value, '>': face > c.value, '<=': face <= c.value, '>=': face >= c.value})[c.comparison];

/** Rolls `formula` as roll `index` under the hex `seed`: the record the server's rolled event carries. */
export async function rollFormula(formula, seedHex, index) {
  const tree = parseFormula(formula);
  const seed = new Uint8Array(seedHex.match(/../g).map((pair) => parseInt(pair, 16)));
  const uniform = await stream(seed, index);
  let budget = LIMITS.extraDice;
  const terms = [];
  const rollTerm = async (term) => {
    const draw = async () => term.lowest + await uniform(term.highest - term.lowest + 1);
    const dice = [];
    for (let n = 0; n < term.count; n += 1) {
      let face = await draw();
      if (term.reroll) {
        while (matches(term.reroll.condition, face) && budget > 0) {
          dice.push({face, rolls: [face], rerolled: true});
          budget -= 1;
          face = await draw();
          if (!term.reroll.recursive) break;
        }
      }
      if (!term.explode) { dice.push({face, rolls: [face]}); continue; }
      if (term.explode.style === 'compound') {
        const rolls = [face];
        while (matches(term.explode.condition, rolls[rolls.length - 1]) && budget > 0) { budget -= 1; rolls.push(await draw()); }
        dice.push({face: rolls.reduce((a, b) => a + b, 0), rolls, exploded: rolls.length > 1});
        continue;
      }
      for (let extra = 0; ; ) {
        const fires = matches(term.explode.condition, face) && budget > 0 && (term.explode.style !== 'once' || extra === 0);
        const penalty = term.explode.style === 'penetrate' && extra > 0 ? 1 : 0;
        dice.push({face: face - penalty, rolls: [face], exploded: fires});
        if (!fires) break;
        budget -= 1;
        extra += 1;
        face = await draw();
      }
    }
    for (const die of dice.filter((d) => !d.rerolled)) {
      if (term.minimum !== undefined) die.face = Math.max(die.face, term.minimum);
      if (term.maximum !== undefined) die.face = Math.min(die.face, term.maximum);
    }
    if (term.keep) {
      const active = dice.map((_, i) => i).filter((i) => !dice[i].rerolled);
      const highest = [...active].sort((a, b) => dice[b].face - dice[a].face || a - b);
      const lowest = [...active].sort((a, b) => dice[a].face - dice[b].face || a - b);
      const {kind, count} = term.keep;
      const kept = new Set({highest: highest.slice(0, count), lowest: lowest.slice(0, count),
        dropHighest: lowest.slice(0, Math.max(0, active.length - count)), dropLowest: highest.slice(0, Math.max(0, active.length - count))}[kind]);
      for (const i of active) if (!kept.has(i)) dice[i].dropped = true;
    }
    let value = 0;
    const counts = term.success || term.failure;
    for (const die of dice.filter((d) => !d.rerolled && !d.dropped)) {
      if (counts) {
        die.success = term.success ? matches(term.success, die.face) : false;
        die.failure = term.failure ? matches(term.failure, die.face) : false;
        value += (die.success ? 1 : 0) - (die.failure ? 1 : 0);
      } else value += die.face;
    }
    terms.push({notation: term.notation, value, dice: dice.map((die) => {
      const out = {face: die.face};
      if (die.rolls.length !== 1 || die.rolls[0] !== die.face) out.rolls = die.rolls;
      for (const flag of ['dropped', 'rerolled', 'exploded', 'success', 'failure']) if (die[flag]) out[flag] = true;
      return out;
    })});
    return value;
  };
  const evaluate = async (node) => {
    if ('number' in node) return node.number;
    if ('dice' in node) return rollTerm(node.dice);
    if ('negate' in node) return -(await evaluate(node.negate));
    const left = await evaluate(node.left);
    const right = await evaluate(node.right);
    if (node.op === '/' && right === 0) throw Object.assign(new Error('divides by zero'), {code: 'BAD_FORMULA'});
    return {'+': left + right, '-': left - right, '*': left * right, '/': Math.trunc(left / right)}[node.op];
  };
  const total = await evaluate(tree);
  return {formula, index, total, terms};
}

/** JSON with sorted keys: equal values, equal text. */
const canonical = (value) => (Array.isArray(value) ? `[${value.map(canonical).join(',')}]`
  : value && typeof value === 'object' ? `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`
    : JSON.stringify(value));

/** Checks the seed against the commitment and recomputes every roll; returns the mismatches (empty: all fair). */
export async function verifyRolls(seedHex, commitment, rolls) {
  const problems = [];
  const seed = new Uint8Array(seedHex.match(/../g).map((pair) => parseInt(pair, 16)));
  const digest = [...new Uint8Array(await crypto.subtle.digest('SHA-256', seed))].map((b) => b.toString(16).padStart(2, '0')).join('');
  if (digest !== commitment) problems.push('the seed does not hash to the commitment');
  for (const event of rolls) {
    const roll = event.roll ?? event;
    try {
      if (event.seq !== undefined && event.seq !== roll.index) problems.push(`roll ${roll.index}: logged at ${event.seq}`);
      const expected = await rollFormula(roll.formula, seedHex, roll.index);
      if (canonical(expected) !== canonical(roll)) problems.push(`roll ${roll.index}: not what '${roll.formula}' rolls`);
    } catch (error) {
      problems.push(`roll ${roll.index}: ${error.message}`);
    }
  }
  return problems;
}

/**
 * The roll box for the table's side panel. `send(op)` sends an op (resolving on its answer), `refused(what)` reports a
 * refusal, `messages` is the panel's list, `nameOf(id)` names people, `dice` the session's {commitment, seed?}.
 * `own` (optional) chooses dice: {choices() → the dice assets offered, chosen() → this seat's dice digest, picture(digest)
 * → an ImageBitmap, kept: {get() → a digest, set(digest)} (a member's ref, a player's browser)}.
 * Returns {element, handle(event)}: `handle` takes every live event and shows rolls and the reveal.
 */
export function diceBox({send, refused, messages, nameOf, dice, own}) {
  const seen = [];
  let seed = dice?.seed ?? null;
  const formula = h('input', {id: 'dice-formula', type: 'text', maxlength: String(LIMITS.length), placeholder: '4d6kh3+2', autocomplete: 'off', required: true, 'aria-label': 'Dice to roll, e.g. 4d6kh3+2'});
  const blind = h('input', {id: 'dice-blind', type: 'checkbox'});
  const roll = (text) => send({kind: 'roll', formula: text, ...(blind.checked ? {blind: true} : {})}).catch(refused('the roll'));
  const quick = QUICK.map((die) => h('button', {type: 'button', class: 'ghost dice-quick', dataset: {die}}, die));
  for (const button of quick) button.addEventListener('click', () => roll(`1${button.dataset.die}`));
  const form = h('form', {id: 'dice-form', class: 'dice-form'}, formula, h('button', {type: 'submit', class: 'primary'}, 'Roll'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (formula.value.trim()) roll(formula.value.trim()).then(() => { formula.value = ''; });
  });
  const commitment = h('p', {id: 'dice-commitment', class: 'dice-commitment', title: dice?.commitment ?? ''},
    dice?.commitment ? `Dice commitment ${dice.commitment.slice(0, 16)}…` : '');
  const result = h('p', {id: 'dice-verdict', class: 'dice-verdict', role: 'status'});
  const verify = h('button', {type: 'button', id: 'dice-verify', class: 'ghost', hidden: !seed}, 'Verify the rolls');
  verify.addEventListener('click', async () => {
    if (!globalThis.crypto?.subtle) { result.textContent = 'Verifying needs https or localhost (WebCrypto).'; return; }
    const problems = await verifyRolls(seed, dice.commitment, seen);
    result.textContent = problems.length ? `Mismatch: ${problems.join('; ')}` : `All ${seen.length} rolls match the seed.`;
    result.className = `dice-verdict ${problems.length ? 'error' : 'ok'}`;
  });
  // A die drawn with the roller's dice: its picture, the face written over it (struck through when dropped).
  const drawn = (digest, die) => {
    const label = `${die.face}${die.dropped || die.rerolled ? ' (dropped)' : ''}`;
    const face = h('canvas', {class: `die${die.dropped || die.rerolled ? ' dropped' : ''}`, width: '56', height: '56', role: 'img', 'aria-label': label, dataset: {face: String(die.face)}});
    own.picture(digest).then((picture) => {
      const context = face.getContext('2d');
      context.drawImage(picture, 0, 0, 56, 56);
      context.font = 'bold 26px sans-serif';
      context.textAlign = 'center';
      context.textBaseline = 'middle';
      context.lineWidth = 4;
      context.strokeStyle = '#000';
      context.fillStyle = '#fff';
      context.strokeText(String(die.face), 28, 29);
      context.fillText(String(die.face), 28, 29);
      face.dataset.drawn = 'true';
    }, () => face.replaceWith(h('span', {}, label)));
    return face;
  };
  const faces = (rolled, digest) => rolled.terms.flatMap((term) => term.dice.map((die) => (digest && own ? drawn(digest, die)
    : die.dropped || die.rerolled ? h('s', {}, String(die.face)) : h('span', {}, String(die.face))))).flatMap((node) => [node, ' ']);
  const show = (event, note = '') => {
    const who = `${nameOf(event.from)}${event.label ? ` (${event.label})` : ''}${note}`;
    const line = event.roll
      ? h('li', {class: `roll${event.blind || event.to ? ' private' : ''}`, dataset: {dice: event.dice ?? ''}}, h('strong', {}, `${who}: `),
        `${event.roll.formula} = `, h('b', {}, String(event.roll.total)), ' [', faces(event.roll, event.dice), ']')
      : h('li', {class: 'roll private'}, h('strong', {}, `${who}: `), `${event.formula} rolled blind for the host`);
    messages.appendChild(line);
    messages.scrollTop = messages.scrollHeight;
  };
  const handle = (event) => {
    if (event.type === 'rolled') {
      if (event.roll) seen.push(event);
      show(event);
    } else if (event.type === 'revealed') {
      seed = event.seed;
      for (const rolled of event.blind ?? []) {
        if (!seen.some((known) => known.seq === rolled.seq)) { seen.push(rolled); show(rolled, ' — revealed'); }
      }
      commitment.textContent = `Dice seed revealed: ${seed.slice(0, 16)}…`;
      verify.hidden = false;
    }
  };
  const element = h('div', {class: 'dice-box'}, h('div', {class: 'dice-quick-row'}, quick), form,
    h('label', {class: 'dice-blind'}, blind, ' Blind (only the host sees it)'), own ? chooser(own, send, refused) : null,
    own?.statistics ? scoresButton(own.statistics) : null, commitment, verify, result);
  return {element, handle};
}

/**
 * "Your dice": the dice this table offers, this seat's choice selected; choosing sends a `dice` op and keeps the choice
 * (`own.kept`), which a later table takes up again when it offers the same dice.
 */
function chooser(own, send, refused) {
  const select = h('select', {id: 'dice-choice', 'aria-label': 'Your dice'}, h('option', {value: ''}, 'Plain dice'));
  const choose = (asset) => send({kind: 'dice', asset: asset || null}).then(() => own.kept.set(asset), refused('the dice'));
  select.addEventListener('change', () => choose(select.value));
  own.choices().then(async (dice) => {
    select.append(...dice.map((asset) => h('option', {value: asset.digest}, `${asset.name} · ${asset.pack}`)));
    const kept = await own.kept.get();
    if (kept && kept !== own.chosen() && dice.some((asset) => asset.digest === kept)) await choose(kept);
    select.value = own.chosen() ?? '';
  }, () => { select.disabled = true; });
  return h('label', {class: 'dice-choice'}, 'Your dice ', select);
}

/** "High scores": the group's list per die, fetched again on each press, shown below the button. */
function scoresButton(statistics) {
  const button = h('button', {type: 'button', id: 'dice-high-scores', class: 'ghost'}, 'High scores');
  const slot = h('div', {});
  button.addEventListener('click', () => statistics().then(
    (answer) => replace(slot, answer.dice?.length ? highScores(answer) : h('p', {class: 'muted'}, 'No revealed rolls yet.')),
    () => replace(slot, h('p', {class: 'muted'}, 'The high scores could not be read.'))));
  return h('div', {class: 'dice-scores-box'}, button, slot);
}

/**
 * The group's high-score list per die (`GET /v1/sessions/{id}/dice/statistics`), in a table per die: luckiest first.
 * Each name says what holds the record (a member, a player's key, one game's seat): two rollers may share a name.
 */
export function highScores(statistics) {
  const format = (value) => value.toFixed(2);
  return h('div', {class: 'dice-scores', id: 'dice-scores'}, (statistics.dice ?? []).map((die) => h('table', {class: 'dice-score'},
    h('caption', {}, die.die),
    h('thead', {}, h('tr', {}, ['Who', 'Dice', 'Mean (expected)', 'Highest', 'Best streak'].map((title) => h('th', {scope: 'col'}, title)))),
    h('tbody', {}, die.rollers.map((roller) => h('tr', {},
      h('td', {}, roller.name ?? roller.who, ' ', h('small', {class: 'muted', dataset: {kind: roller.kind}}, KINDS[roller.kind] ?? '')),
      h('td', {}, String(roller.count)),
      h('td', {}, `${format(roller.mean)} (${format(roller.expected)})`), h('td', {}, String(roller.highest)),
      h('td', {}, String(roller.streak))))))));
}
