// What a list should hold, computed here from the users a test knows of, never by the service: the reference
// that component tests and the fuzzer compare the service's lists with.

/** A user as a list shows it, in either shape's field names. */
export interface Listed {
  readonly id: number;
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
}

export type ListField = 'id' | 'email' | 'firstName' | 'lastName';
export type ListSort = ReadonlyArray<readonly [field: ListField, descending: boolean]>;

/** Case folding as the contract describes it: Unicode lower case. */
export const fold = (text: string) => text.toLowerCase();

/** Code point order, as the service sorts (JavaScript's `<` compares UTF-16 code units). */
export function byCodePoint(a: string, b: string): number {
  const [x, y] = [[...a].map((c) => c.codePointAt(0)!), [...b].map((c) => c.codePointAt(0)!)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

const NAMES: Readonly<Record<string, ListField>> = {
  id: 'id',
  email: 'email',
  firstName: 'firstName',
  lastName: 'lastName',
  first_name: 'firstName',
  last_name: 'lastName',
};

/** A `sort` parameter, in either shape's names, as the contract reads it: a field named again counts where it first appears. */
export function parseSort(sort: string | null | undefined): ListSort {
  if (!sort) return [['id', false]];
  const keys: Array<[ListField, boolean]> = [];
  for (const part of sort.split(',')) {
    const field = NAMES[part.replace(/^-/, '')]!;
    if (!keys.some(([named]) => named === field)) keys.push([field, part.startsWith('-')]);
  }
  return keys;
}

/** The comparison of a sort: its fields in turn, folded; ties by id in the direction of the last field. */
export function comparing(keys: ListSort): (a: Listed, b: Listed) => number {
  const full = keys.some(([field]) => field === 'id') ? keys : [...keys, ['id', keys[keys.length - 1]![1]] as const];
  return (a, b) => {
    for (const [field, descending] of full) {
      const order = field === 'id' ? a.id - b.id : byCodePoint(fold(a[field]), fold(b[field]));
      if (order !== 0) return descending ? -order : order;
    }
    return 0;
  };
}

/** The users in the order of a sort. */
export const sortedBy = <T extends Listed>(users: readonly T[], keys: ListSort): T[] => [...users].sort(comparing(keys));

/** Whether a user matches `q` and `email` (either may be absent). */
export function matches(user: Listed, q?: string | null, email?: string | null): boolean {
  const searched = q == null || [user.firstName, user.lastName, user.email].some((text) => fold(text).includes(fold(q)));
  return searched && (email == null || fold(user.email) === fold(email));
}

/** A shape A user in the reference's field names. */
export const fromShapeA = (user: { id: number; email: string; first_name: string; last_name: string }): Listed => ({
  id: user.id,
  email: user.email,
  firstName: user.first_name,
  lastName: user.last_name,
});
