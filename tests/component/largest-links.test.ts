import SqliteDatabase from 'better-sqlite3';
import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { withTestServer } from '../support/test-server.js';

// The contract bounds Link (16 KiB in shape B, 64 KiB in shape A) from the bounds of what a link repeats:
// BASE_PATH, the list's query and a cursor made from the sort values of one user. Here every one of them is
// as long as it may be, in the characters that percent-encode longest (four UTF-8 bytes each), and the
// client of these tests checks each Link against the contract's schema (maxLength and pattern). The cursor
// is the longest a list makes: its length is the contract's bound on the parameter.

const wide = '𝔘'; // U+1D518: four bytes in UTF-8, twelve characters percent-encoded
const name = wide.repeat(200);
const email = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
const q = wide.repeat(100);

test('the longest links a list can make stay within the contract', () =>
  withTestServer({ env: { SEED_DEMO_DATA: 'false', BASE_PATH: `/${'p'.repeat(199)}` } }, async (server, api) => {
    expect(email).toHaveLength(254);
    // Ids near the largest a store holds, which take a cursor's longest number (five bytes).
    const db = new SqliteDatabase(server.store.sqliteFile!);
    db.prepare(`insert into sqlite_sequence (name, seq) values ('users', ?)`).run(2 ** 31 - 4);
    db.close();
    for (let i = 0; i < 3; i++) expect((await api.post('/users', { firstName: name, lastName: name, email })).status).toBe(201);
    const query = `q=${encodeURIComponent(q)}&email=${encodeURIComponent(email)}`;
    const local = await api.get(`/users?${query}&sort=-email,-firstName,-lastName,-id&limit=1`);
    expect(local.status).toBe(200);
    const next = local.headers.get('link')!;
    expect(next).toMatch(/; rel="next"$/);
    const cursor = new URL(next.slice(1, next.indexOf('>')), 'http://x').searchParams.get('cursor')!;
    expect(cursor).toHaveLength(
      loadContract()
        .operation('listUsers')
        .parameters.find((p) => p.name === 'cursor')!.schema.maxLength as number,
    );
    const demo = await api.get(`/api/users?${query}&sort=-email,-first_name,-last_name,-id&per_page=1&page=2`);
    expect(demo.status).toBe(200);
    const links = demo.headers.get('link')!;
    expect(links.match(/rel="(first|prev|next|last)"/g)).toEqual(['rel="first"', 'rel="prev"', 'rel="next"', 'rel="last"']);
    expect(next.length).toBeLessThanOrEqual(16_384);
    expect(links.length).toBeLessThanOrEqual(65_536);
  }));
