import { createUserRecordsClient, pages } from '../../client/src/index.js';

// Compiled by `tsc --noEmit` (make test), never run: the helpers' types are the contract's, not text or any;
// each @ts-expect-error must meet a real type error.

export async function listTypes(): Promise<void> {
  const client = createUserRecordsClient({ baseUrl: 'http://127.0.0.1:3000' });

  // Each page carries the list's count, typed from the contract's X-Total-Count and X-Total-Count-Relation.
  for await (const page of pages(client, '/users', { limit: 5 })) {
    const total: number = page.total;
    const relation: 'eq' | 'gte' = page.totalRelation;
    // @ts-expect-error X-Total-Count is a number, not text
    const text: string = page.total;
    // @ts-expect-error the relation is eq or gte, nothing else
    const unknown: 'exact' = page.totalRelation;
    void [total, relation, text, unknown];
  }
}
