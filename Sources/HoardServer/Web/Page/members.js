// A group's members, for its owners: its people (change a role, remove one), their devices' tokens (revoke one), and
// invitations (a one-time link to send).
// And the page an invitation link opens: it asks whose token it will be, redeems the code and signs in.
import {api, auth, APIError} from './api.js';
import {h, replace} from './dom.js';

function when(text) {
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? '' : date.toLocaleDateString();
}

/** The group's people: a member is an identity whose tokens are their devices; owners change roles and remove them. */
function peopleList(members, status, reload) {
  return members.map((member) => {
    const managed = !member.isCaller && member.role !== 'operator';
    const role = h('select', {'aria-label': `Role of ${member.name}`},
      h('option', {value: 'member'}, 'member'), h('option', {value: 'owner'}, 'owner'));
    role.value = member.role;
    role.hidden = !managed;
    role.addEventListener('change', async () => {
      role.disabled = true;
      try {
        const changed = await api(`/v1/members/${member.id}`, {method: 'PATCH', json: {role: role.value}});
        status.textContent = `${member.name} is now ${changed.role}.`;
        await reload();
      } catch (failure) {
        role.value = member.role;
        role.disabled = false;
        status.textContent = `Role not changed: ${failure.message}`;
      }
    });
    const remove = h('button', {type: 'button', class: 'ghost danger', 'aria-label': `Remove ${member.name}`}, 'Remove');
    remove.hidden = !managed || member.devices === 0;
    remove.addEventListener('click', async () => {
      if (!confirm(`Remove “${member.name}”? Every device of theirs is signed out at once.`)) return;
      remove.disabled = true;
      try {
        await api(`/v1/members/${member.id}`, {method: 'DELETE'});
        status.textContent = `Removed ${member.name}.`;
        await reload();
      } catch (failure) {
        remove.disabled = false;
        status.textContent = `Not removed: ${failure.message}`;
      }
    });
    const devices = member.devices === 1 ? '1 device' : `${member.devices} devices`;
    return h('li', {class: 'person'},
      h('strong', {}, member.name), ' ', h('span', {class: `badge ${member.role}`}, member.role),
      member.isCaller ? h('span', {class: 'muted'}, ' (you)') : null,
      h('span', {class: 'muted'}, ` · ${devices} `), role, remove);
  });
}

export async function showMembers(main) {
  let listed;
  let people;
  try {
    listed = await api('/v1/tokens');
    people = await api('/v1/members');
  } catch (failure) {
    if (!(failure instanceof APIError) || failure.status !== 403) throw failure;
    replace(main, h('section', {class: 'members'}, h('h1', {}, 'Members'),
      h('div', {class: 'card notice'}, h('p', {}, 'Only your group’s owners manage its members. Ask one of them to invite someone.'))));
    return;
  }
  const status = h('p', {class: 'muted', role: 'status'});
  const rows = listed.tokens.map((token) => {
    const revoke = h('button', {type: 'button', class: 'ghost danger', 'aria-label': `Revoke ${token.name}`}, 'Revoke');
    revoke.hidden = token.isCaller;
    revoke.addEventListener('click', async () => {
      if (!confirm(`Revoke “${token.name}”? Whoever holds it is signed out at once.`)) return;
      revoke.disabled = true;
      try {
        await api(`/v1/tokens/${token.id}`, {method: 'DELETE'});
        row.remove();
        status.textContent = `Revoked ${token.name}.`;
      } catch (failure) {
        revoke.disabled = false;
        status.textContent = `Not revoked: ${failure.message}`;
      }
    });
    const row = h('li', {class: 'member'},
      h('strong', {}, token.name), ' ', h('span', {class: `badge ${token.role}`}, token.role),
      token.isCaller ? h('span', {class: 'muted'}, ' (you)') : null,
      h('span', {class: 'muted'}, ` · since ${when(token.createdAt)} `), revoke);
    return row;
  });
  const role = h('select', {id: 'invite-role'}, h('option', {value: 'member'}, 'member'), h('option', {value: 'owner'}, 'owner'));
  const link = h('input', {id: 'invite-link', type: 'text', readonly: true, hidden: true, 'aria-label': 'Invitation link'});
  const make = h('button', {type: 'submit', class: 'primary'}, 'Make an invitation link');
  const form = h('form', {class: 'card invite'},
    h('h2', {}, 'Invite someone'),
    h('p', {class: 'muted'}, 'The link works once, for seven days. Send it to the person you invite.'),
    h('label', {for: 'invite-role'}, 'As '), role, ' ', make, link);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    make.disabled = true;
    try {
      const invited = await api('/v1/invites', {method: 'POST', json: {role: role.value}});
      link.value = location.origin + invited.path;
      link.hidden = false;
      link.select();
      status.textContent = `An invitation as ${invited.role} is ready: copy the link.`;
    } catch (failure) {
      status.textContent = `No invitation: ${failure.message}`;
    } finally {
      make.disabled = false;
    }
  });
  const reload = () => showMembers(main).then(() => {
    const shown = main.querySelector('.members [role=status]');
    if (shown) shown.textContent = status.textContent;
  });
  replace(main, h('section', {class: 'members'},
    h('h1', {}, `Members of ${listed.group}`), status,
    h('ul', {class: 'card people-list'}, peopleList(people.members, status, reload)),
    h('h2', {}, 'Devices'),
    h('ul', {class: 'card member-list'}, rows), form));
}

/** The page of an invitation link: works signed out; redeeming signs this tab in with the new token. */
export function showInvite(main, code, done) {
  const name = h('input', {id: 'invite-name', type: 'text', required: true, maxlength: '64', autocomplete: 'nickname',
    placeholder: 'Ann’s tablet'});
  const error = h('p', {class: 'error', role: 'alert'});
  const button = h('button', {type: 'submit', class: 'primary'}, 'Join the group');
  const form = h('form', {class: 'card sign-in', id: 'invite'},
    h('h1', {}, 'You are invited to a Hoard group'),
    h('p', {class: 'muted'}, 'Your name (or, when the invitation names you already, this device’s); your group’s owners see it.'),
    h('label', {for: 'invite-name'}, 'Name'), name, error, button);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    error.textContent = '';
    try {
      const accepted = await api('/v1/invites/accept', {method: 'POST', json: {code, name: name.value.trim()}, token: ''});
      auth.signIn(accepted.token);
      location.hash = '#/';
      done();
    } catch (failure) {
      error.textContent = failure instanceof APIError && failure.status === 404
        ? 'This invitation was used or has expired. Ask for a new link.'
        : `Not joined: ${failure.message}`;
      button.disabled = false;
    }
  });
  replace(main, h('div', {class: 'center'}, form));
  name.focus();
}
