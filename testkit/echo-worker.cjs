// A stand-in worker for the front door's WebSocket path: it answers the waker's health check
// like a worker (status, ping) and echoes WebSocket messages. The real worker accepts no
// upgrade until the live view is merged.
const http = require('node:http');
const { WebSocketServer } = require('ws');

const status = {
  initialized: true,
  browser_context_active: true,
  page_pool_active: true,
  max_pages: 5,
  slowmo: 0,
  page_count: 0,
  available_pages: 0,
};

// ECHO_PING_FAILS=N: the first N pings are answered 503, as a worker still busy starting might.
let pingFails = Number(process.env.ECHO_PING_FAILS ?? 0);
const commit = process.env.COMMIT_INFO ? JSON.parse(process.env.COMMIT_INFO) : null;

const server = http.createServer((req, res) => {
  let body;
  if (req.url === '/api/v1/system/ping' && pingFails > 0) {
    pingFails -= 1;
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ success: false, error: 'still starting', page_id: null }));
    return;
  }
  if (req.url === '/api/v1/system/status') body = status;
  else if (req.url === '/api/v1/system/ping')
    body = {
      pong: Date.now(),
      status: 'alive',
      commit,
      persona: process.env.PB_WAKER_PERSONA ?? null,
      activity: { in_flight: 0, idle_seconds: 0 },
      proxy_errors: null,
    };
  else body = { echo: req.url, pid: process.pid };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
});
const wss = new WebSocketServer({ server });
wss.on('connection', (ws) => ws.on('message', (data) => ws.send(`echo:${String(data)}`)));
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
process.on('SIGTERM', () => {
  for (const c of wss.clients) c.terminate();
  server.close(() => process.exit(0));
});
