// What a search of the users bulk-seed.ts makes must find, whichever store and index answers it.

interface Found {
  status: number;
  total: string | null;
  emails: string[];
}

async function search(baseUrl: string, path: string): Promise<Found> {
  const res = await fetch(`${baseUrl}${path}`);
  return { status: res.status, total: res.headers.get('x-total-count'), emails: ((await res.json()) as Array<{ email: string }>).map((user) => user.email) };
}

/**
 * Searches of a store of bulk users (at least 123,460 of them) find exactly their users, in order, and a
 * user created through the service is found at once: the index follows writes.
 */
export async function expectBulkSearchesFound(baseUrl: string): Promise<void> {
  expect(await search(baseUrl, '/users?q=BULK12345@&sort=-email')).toEqual({ status: 200, total: '1', emails: ['bulk12345@example.com'] });
  // bulk12345 and the ten users whose numbers continue it (bulk123450 to bulk123459), by address descending
  // ('@' sorts after the digits).
  const continued = Array.from({ length: 10 }, (_, i) => `bulk12345${9 - i}@example.com`);
  expect(await search(baseUrl, '/users?q=bulk12345&sort=-email')).toEqual({ status: 200, total: '11', emails: ['bulk12345@example.com', ...continued] });
  const created = await fetch(`${baseUrl}/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ firstName: 'Zephyrine', lastName: 'Q', email: 'zephyrine@example.com' }),
  });
  expect(created.status).toBe(201);
  expect((await search(baseUrl, '/users?q=zephyr')).emails).toEqual(['zephyrine@example.com']);
}
