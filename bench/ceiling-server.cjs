// A trivial Express JSON route: the ceiling the benchmark compares the service with.
'use strict';
const express = require('express');

const app = express();
app.disable('x-powered-by');
app.get('/ping/', (_req, res) => res.json({ id: 1, status: 'ok', ready_to_merge: true }));
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
