// Building DOM nodes without HTML strings: every piece of data becomes a text node, so a hostile pack, asset or
// player name is shown as text, never parsed as markup.

/**
 * h('div', {class: 'card', onclick: fn, dataset: {digest}}, 'text', childNode, [more, children])
 * Attribute values are set with setAttribute; strings among the children become text nodes.
 */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else if (child instanceof Node) node.appendChild(child);
    else node.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces every child of a node. */
export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

/** 1234567 → "1.2 MB". */
export function bytes(count) {
  if (count === undefined || count === null) return '–';
  if (count < 1000) return `${count} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = count;
  let unit = -1;
  do { value /= 1000; unit += 1; } while (value >= 1000 && unit < units.length - 1);
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** "sha256:abcdef…" shortened for people; the whole digest stays in a title. */
export function shortDigest(digest) {
  return h('code', {class: 'digest', title: digest}, `${digest.slice(0, 15)}…${digest.slice(-6)}`);
}

/** Plural words: plural(3, 'asset') → "3 assets". */
export function plural(count, word) {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** A short-lived message at the bottom of the screen. */
export function toast(message, kind = 'info') {
  const node = h('div', {class: `toast ${kind}`, role: 'status'}, message);
  document.body.appendChild(node);
  setTimeout(() => node.remove(), 4000);
}
