// The ceiling: bare node:http answering every request with the same precomputed body.
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ id: 2, firstName: 'Tobias', lastName: 'Wren', email: 'tobias.wren@example.com' }));
const headers = { 'content-type': 'application/json', 'content-length': body.length };
const server = createServer((_req, res) => res.writeHead(200, headers).end(body));
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log(`listening ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
