// The page a share link opens: the shared picture and its name. No token: the link's id is the permission.
import {h, replace} from './dom.js';

const main = document.getElementById('main');
const id = decodeURIComponent(location.pathname.split('/').pop() ?? '');

async function show() {
  const response = await fetch(`/v1/shares/${encodeURIComponent(id)}`, {credentials: 'omit'});
  if (!response.ok) {
    replace(main, h('div', {class: 'card notice'}, h('h1', {}, 'This link does not work'),
      h('p', {}, 'It was revoked, or it was never a Hoard share link. Ask the person who sent it for a new one.')));
    return;
  }
  const share = await response.json();
  const image = h('img', {id: 'shared-picture', alt: share.name ?? 'shared picture', src: share.pictureURL});
  replace(main,
    h('h1', {class: 'share-title'}, share.name ?? 'A shared picture'),
    h('div', {class: 'picture card'}, image),
    h('p', {class: 'muted'}, `Shared ${new Date(share.createdAt).toLocaleDateString()} through Hoard.`));
  document.title = `${share.name ?? 'A shared picture'} · Hoard`;
}

show().catch((error) => replace(main, h('p', {class: 'error'}, `Cannot show the picture: ${error.message}`)));
