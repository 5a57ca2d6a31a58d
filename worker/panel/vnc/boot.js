// Loads the live view's module (/vnc/viewer.js and what it imports). A page whose module or
// one of its imports failed to load (a connection lost or reset on the way, or Chromium ending
// every request in flight when the machine's network changes) would otherwise sit at
// "Starting…" for good: it is loaded again, a few times, then the person is told to reload.
(() => {
  const KEY = 'persona-browser.viewer-loads';
  const TRIES = 5;
  const WINDOW_MS = 5 * 60_000;
  const RETRY_MS = 2_000;
  const script = document.createElement('script');
  script.type = 'module';
  script.src = '/vnc/viewer.js';
  script.addEventListener('error', () => {
    const now = Date.now();
    /** @type {number[]} */
    let recent = [];
    try {
      /** @type {unknown} */
      const stored = JSON.parse(sessionStorage.getItem(KEY) || '[]');
      if (Array.isArray(stored)) {
        for (const t of /** @type {unknown[]} */ (stored)) {
          if (typeof t === 'number' && now - t < WINDOW_MS) recent.push(t);
        }
      }
    } catch {
      recent = [];
    }
    const status = document.getElementById('status');
    const message = document.getElementById('message');
    if (recent.length >= TRIES) {
      if (status) status.textContent = 'Not loaded';
      if (message) {
        message.textContent =
          'The live view could not load its scripts. Reload the page to try again.';
        message.hidden = false;
      }
      return;
    }
    sessionStorage.setItem(KEY, JSON.stringify([...recent, now]));
    if (status) status.textContent = 'Loading again…';
    setTimeout(() => location.reload(), RETRY_MS);
  });
  document.body.append(script);
})();
