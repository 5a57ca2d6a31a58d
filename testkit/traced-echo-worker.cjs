// The kit's stand-in worker (echo-worker.cjs), started slowly and traced from outside the waker:
// it appends `{persona, pid, event: 'boot' | 'listening'}` lines to PB_TRACE_FILE when its
// process has booted and once it listens, after ECHO_START_DELAY_MS (what a real worker's Xvfb
// and Chromium take). Its browser's start from light sleep (GET /api/v1/system/start) takes as
// long, between a 'start' and a 'started' line. A test reads from the lines how many workers, or
// browsers, were starting at any moment: from their order in the file, which is the order they
// happened in (each line is one write at the file's end, and an end is written before the reply
// that lets the waker start the next), not from times read in different processes' clocks.
const fs = require('node:fs');
const http = require('node:http');
const { setTimeout } = require('node:timers');

const traceFile = process.env.PB_TRACE_FILE;
const trace = (event) => {
  if (!traceFile) return;
  const line = JSON.stringify({
    persona: process.env.PB_WAKER_PERSONA ?? null,
    pid: process.pid,
    event,
  });
  fs.appendFileSync(traceFile, `${line}\n`);
};

trace('boot');
const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once('listening', () => trace('listening'));
  return listen.apply(this, args);
};
const delayMs = Number(process.env.ECHO_START_DELAY_MS ?? 0);
const createServer = http.createServer;
http.createServer = function (handler) {
  return createServer.call(this, (req, res) => {
    if (req.url !== '/api/v1/system/start') return handler(req, res);
    trace('start');
    setTimeout(() => {
      trace('started');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ success: true, page_id: null, message: 'Navigator started' }));
    }, delayMs);
  });
};
setTimeout(() => require('./echo-worker.cjs'), delayMs);
