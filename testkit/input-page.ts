/**
 * The fixture page of the input tests: controls at known places, an inner scroller, a tall
 * body, and a script that records every event the page receives in `window.__log`.
 */
export const INPUT_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Input lab</title>
<style>
  body { margin: 0; height: 4000px; font: 14px sans-serif; }
  #btn { position: absolute; left: 300px; top: 200px; width: 120px; height: 40px; }
  #small { position: absolute; left: 900px; top: 500px; width: 12px; height: 12px; padding: 0; }
  #name { position: absolute; left: 300px; top: 300px; width: 300px; }
  #second { position: absolute; left: 300px; top: 350px; width: 300px; }
  #area { position: absolute; left: 300px; top: 400px; width: 300px; height: 80px; }
  #scroller { position: absolute; left: 700px; top: 150px; width: 300px; height: 200px; overflow: auto; }
  #scroller .inner { height: 2000px; background: linear-gradient(#fc0, #0cf); }
  #clipbox { position: absolute; left: 100px; top: 600px; width: 200px; height: 100px; overflow: hidden; }
  #half { position: absolute; left: 150px; top: 50px; width: 100px; height: 100px; background: #c33; }
  #mover { position: absolute; left: 1000px; top: 650px; width: 60px; height: 30px; }
  #cover { position: absolute; left: 1200px; top: 200px; width: 80px; height: 40px; }
  #veil { position: absolute; left: 1190px; top: 190px; width: 100px; height: 60px; background: rgba(0,0,0,.2); }
  #below { position: absolute; left: 300px; top: 3000px; width: 100px; height: 30px; }
</style></head><body>
<button id="btn">Button</button>
<button id="small"></button>
<input id="name" autocomplete="off"><input id="second" autocomplete="off"><textarea id="area"></textarea>
<div id="scroller"><div class="inner"></div></div>
<div id="clipbox"><div id="half"></div></div>
<button id="mover">Mover</button>
<button id="cover">Covered</button><div id="veil"></div>
<button id="below">Below</button>
<script>
  const log = { clicks: [], moves: [], keys: [], focus: [], wheels: [], downs: [], ups: [] };
  window.__log = log;
  const rect = (el) => { const r = el.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; };
  addEventListener('click', (e) => log.clicks.push({ id: e.target.id, x: e.clientX, y: e.clientY, trusted: e.isTrusted, rect: rect(e.target), t: performance.now() }), true);
  addEventListener('mousemove', (e) => log.moves.push({ x: e.clientX, y: e.clientY, t: performance.now(), trusted: e.isTrusted, over: e.target.id }), true);
  addEventListener('mousedown', (e) => log.downs.push({ t: e.timeStamp, trusted: e.isTrusted }), true);
  addEventListener('mouseup', (e) => log.ups.push({ t: e.timeStamp }), true);
  addEventListener('keydown', (e) => log.keys.push({ key: e.key, code: e.code, shift: e.shiftKey, trusted: e.isTrusted, t: performance.now() }), true);
  addEventListener('focusin', (e) => log.focus.push(e.target.id), true);
  addEventListener('wheel', (e) => log.wheels.push({ dy: e.deltaY, x: e.clientX, y: e.clientY, trusted: e.isTrusted, t: performance.now() }), { capture: true, passive: true });
  // #mover misbehaves on request, once the pointer starts moving: ?jump=once moves it 150 px
  // once, ?jump=always keeps jumping between two places, ?jump=vanish removes it.
  const jump = new URLSearchParams(location.search).get('jump');
  const mover = document.getElementById('mover');
  // The test arms the trap (window.__arm()) once the pointer rests away from #mover; it springs
  // when the pointer has really travelled (the browser sends a mousemove of its own on load).
  let armed = false;
  let origin = null;
  window.__arm = () => { armed = Boolean(jump); origin = null; return armed; };
  addEventListener('mousemove', (e) => {
    if (!armed) return;
    origin = origin || { x: e.clientX, y: e.clientY };
    if (Math.hypot(e.clientX - origin.x, e.clientY - origin.y) < 30) return;
    armed = false;
    if (jump === 'once') setTimeout(() => { mover.style.left = '1150px'; }, 150);
    if (jump === 'vanish') setTimeout(() => mover.remove(), 150);
    if (jump === 'always') { let far = false; setInterval(() => { far = !far; mover.style.left = far ? '1400px' : '1000px'; }, 120); }
  }, true);
</script></body></html>`;
