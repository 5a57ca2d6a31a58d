/**
 * The page a browser gets for the panel, the live view or the API docs of a persona that sleeps,
 * when it asked without a credential (a page load carries none). Loading it wakes nothing: a
 * scanner fetching `/` of every port costs no browser. The page wakes the persona itself when it
 * holds a credential: a token or key in the address's fragment (a live-view link, `#token=…`
 * or the fleet panel's `#key=…`, never sent in a URL) or the key the persona's panel keeps in this browser; else it asks for the key.
 * It then loads the same address again, now served by the woken worker.
 */
export function asleepPage(persona: string, state: string, keyName: string): string {
  const name = escapeHtml(persona);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${name} is ${escapeHtml(state)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#222}
input{font:inherit;width:100%;box-sizing:border-box;padding:.4rem}button{font:inherit;padding:.4rem 1rem}
#why{color:#a00}
</style></head>
<body>
<h1>Persona ${name} is ${escapeHtml(state)}</h1>
<p id="say">Its browser is not running. A call with its key, or a link with a token, wakes it.</p>
<form id="form" hidden><label>Service key <input id="key" type="password" autocomplete="current-password"></label>
<p><button>Wake ${name}</button></p></form>
<p id="why"></p>
<script>
(() => {
  const KEY = ${JSON.stringify(keyName)};
  const say = (t) => (document.getElementById('say').textContent = t);
  const why = (t) => (document.getElementById('why').textContent = t);
  // A live-view link's token, or the key the fleet panel's own live-view link carries.
  const hash = new URLSearchParams(location.hash.slice(1));
  const fromHash = hash.get('token') || hash.get('key');
  let stored = null;
  try { stored = localStorage.getItem(KEY); } catch (e) {}
  async function wake(credential, keep) {
    say('Waking ${name}: its browser starts, this takes a few seconds…');
    why('');
    try {
      const r = await fetch(location.pathname + location.search, {
        headers: { Authorization: 'Bearer ' + credential },
        cache: 'no-store',
      });
      if (r.ok) {
        if (keep) try { localStorage.setItem(KEY, credential); } catch (e) {}
        location.reload();
        return;
      }
      const body = await r.json().catch(() => ({}));
      why((body.detail || body.error || 'HTTP ' + r.status) + '');
    } catch (e) {
      why(String(e));
    }
    say('${name} did not wake.');
    document.getElementById('form').hidden = false;
  }
  document.getElementById('form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = document.getElementById('key').value.trim();
    if (key) wake(key, true);
  });
  const credential = fromHash || stored;
  if (credential) wake(credential, false);
  else document.getElementById('form').hidden = false;
  // A link pasted into this tab changes only the fragment: the page does not load again.
  window.addEventListener('hashchange', () => {
    const again = new URLSearchParams(location.hash.slice(1));
    const given = again.get('token') || again.get('key');
    if (given) wake(given, false);
  });
})();
</script>
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}
