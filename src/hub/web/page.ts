// The hub's web page at /: plain server-rendered HTML with one small inline script,
// no framework, no external assets. It has one view, "API keys". While the hub has no key,
// the server renders the setup form, which trades the one-time setup token (printed in the
// hub log at start) for the first owner key. With a key, the page lists, creates and deletes
// keys through the same API curl users call.
//
// Where the key lives: sessionStorage, for the life of the browser tab. Not a cookie, so the
// browser never attaches it to a request by itself (no CSRF surface) and nothing persists on
// disk after the tab closes; the cost is typing the key again in a new tab. The
// Content-Security-Policy allows only this page's own script and style (by nonce) and
// requests to this origin.

export interface PageState {
  setupOpen: boolean;
  version: string;
}

const STYLE = `
body{font:15px/1.4 system-ui,sans-serif;margin:2rem auto;max-width:52rem;padding:0 1rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin-top:2rem}
form{display:flex;gap:.5rem;flex-wrap:wrap;align-items:end;margin:.5rem 0}
label{display:flex;flex-direction:column;font-size:.85rem}
input,select,button{font:inherit;padding:.3rem .5rem}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left}
.secret{font-family:monospace;background:#fff7d6;padding:.5rem;word-break:break-all;border:1px solid #e5c100}
.alert{color:#a00}[hidden]{display:none}`;

const SCRIPT = `
const KEY = 'fieldbridge-hub-key';
const $ = (id) => document.getElementById(id);
function say(text) { $('message').textContent = text || ''; }
async function api(method, path, body, key) {
  const headers = {};
  const k = key === undefined ? sessionStorage.getItem(KEY) : key;
  if (k) headers.authorization = 'Bearer ' + k;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw new Error((data && data.detail) || ('HTTP ' + res.status));
  return data;
}
function showSecret(created) {
  $('new-key').hidden = false;
  $('new-key-value').textContent = created.key;
  $('new-key-note').textContent = 'New ' + created.role + ' key "' + created.label + '" (' + created.id + '). It is shown only now: copy it somewhere safe.';
}
function cell(row, text) { const td = document.createElement('td'); td.textContent = text; row.appendChild(td); return td; }
async function refresh() {
  const key = sessionStorage.getItem(KEY);
  $('signin').hidden = !!key;
  $('keys').hidden = !key;
  if (!key) return;
  try {
    const list = await api('GET', '/api/auth/keys');
    const body = $('key-list');
    body.replaceChildren();
    for (const k of list.items) {
      const row = document.createElement('tr');
      row.dataset.id = k.id;
      cell(row, k.label); cell(row, k.role); cell(row, k.created_at); cell(row, k.last_used_at || 'never');
      const del = document.createElement('button');
      del.type = 'button'; del.textContent = 'Delete'; del.className = 'delete';
      del.addEventListener('click', async () => {
        if (!confirm('Delete key "' + k.label + '"? It stops working at once.')) return;
        try { await api('DELETE', '/api/auth/keys/' + encodeURIComponent(k.id)); say('Deleted key "' + k.label + '".'); await refresh(); }
        catch (e) { say(e.message); }
      });
      cell(row, '').appendChild(del);
      body.appendChild(row);
    }
  } catch (e) { say(e.message); }
}
$('setup')?.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try {
    const created = await api('POST', '/api/setup', { setup_token: $('setup-token').value.trim(), label: $('setup-label').value }, null);
    sessionStorage.setItem(KEY, created.key);
    $('setup-section').hidden = true;
    showSecret(created); say(''); await refresh();
  } catch (e) { say(e.message); }
});
$('signin').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const key = $('signin-key').value.trim();
  try { await api('GET', '/api/auth/keys', undefined, key); sessionStorage.setItem(KEY, key); $('signin-key').value = ''; say(''); await refresh(); }
  catch (e) { say(e.message); }
});
$('create').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try { showSecret(await api('POST', '/api/auth/keys', { label: $('create-label').value, role: $('create-role').value })); $('create-label').value = ''; say(''); await refresh(); }
  catch (e) { say(e.message); }
});
$('signout').addEventListener('click', () => { sessionStorage.removeItem(KEY); $('new-key').hidden = true; say(''); refresh(); });
refresh();`;

export function renderPage(state: PageState, nonce: string): string {
  const setup = state.setupOpen
    ? `<section id="setup-section">
  <h2>First owner key</h2>
  <p>This hub has no API key yet. Enter the one-time setup token from the hub log (line <code>hub_setup_token</code>) to create the first owner key.</p>
  <form id="setup">
    <label>Setup token <input id="setup-token" name="setup_token" required autocomplete="off"></label>
    <label>Label <input id="setup-label" name="label" required value="first owner key"></label>
    <button type="submit">Create first owner key</button>
  </form>
</section>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fieldbridge hub: API keys</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<h1>fieldbridge hub <small>${escapeHtml(state.version)}</small></h1>
<h2>API keys</h2>
<p id="message" class="alert" role="alert"></p>
${setup}
<section id="new-key" hidden>
  <p id="new-key-note"></p>
  <p id="new-key-value" class="secret"></p>
</section>
<form id="signin" hidden>
  <label>API key (owner) <input id="signin-key" type="password" required autocomplete="off"></label>
  <button type="submit">Use key</button>
</form>
<section id="keys" hidden>
  <table>
    <thead><tr><th>Label</th><th>Role</th><th>Created</th><th>Last used</th><th></th></tr></thead>
    <tbody id="key-list"></tbody>
  </table>
  <form id="create">
    <label>Label <input id="create-label" required></label>
    <label>Role <select id="create-role"><option value="admin">admin</option><option value="owner">owner</option><option value="viewer">viewer</option></select></label>
    <button type="submit">Create key</button>
  </form>
  <p><button id="signout" type="button">Forget the key in this tab</button></p>
</section>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
