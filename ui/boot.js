// Loads a page's module, named by this script's `data-module` (`<script src="/ui/boot.js"
// data-module="panel.js">`), with what it imports. A page whose module or one of its imports
// failed to load (a connection lost or reset on the way, or Chromium ending every request in
// flight when the machine's network changes) would otherwise stay half drawn for good: it is
// loaded again, five times in five minutes at most, then the person is told to reload.
(() => {
  const TRIES = 5;
  const WINDOW_MS = 5 * 60_000;
  const RETRY_MS = 2_000;
  const me = document.currentScript;
  const src = me?.dataset.module;
  if (!src) return;
  const key = `persona-browser.loads:${location.pathname}`;
  /**
   * Shows `text` where the page shows its state, else at the top of the page.
   * @param {string} text
   */
  const say = (text) => {
    const status = document.getElementById('status');
    if (status) {
      status.textContent = text;
      return;
    }
    let note = document.getElementById('boot-note');
    if (!note) {
      note = document.createElement('p');
      note.id = 'boot-note';
      note.setAttribute('role', 'alert');
      document.body.prepend(note);
    }
    note.textContent = text;
  };
  const script = document.createElement('script');
  script.type = 'module';
  script.src = src;
  script.addEventListener('error', () => {
    const now = Date.now();
    /** @type {number[]} */
    const recent = [];
    try {
      /** @type {unknown} */
      const stored = JSON.parse(sessionStorage.getItem(key) || '[]');
      if (Array.isArray(stored)) {
        for (const t of /** @type {unknown[]} */ (stored)) {
          if (typeof t === 'number' && now - t < WINDOW_MS) recent.push(t);
        }
      }
    } catch {
      // A store that cannot be read counts as empty.
    }
    if (recent.length >= TRIES) {
      say('This page could not load its scripts. Reload it to try again.');
      return;
    }
    sessionStorage.setItem(key, JSON.stringify([...recent, now]));
    say('Loading again…');
    setTimeout(() => location.reload(), RETRY_MS);
  });
  document.body.append(script);
})();
