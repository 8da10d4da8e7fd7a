import type { UserFields } from './user.js';

/** Twelve invented people, so that documented examples such as GET /api/users/2 work on a fresh store. */
export const DEMO_USERS: readonly UserFields[] = [
  ['Mira', 'Castellan'],
  ['Tobias', 'Wren'],
  ['Priya', 'Halvorsen'],
  ['Ezra', 'Lindqvist'],
  ['Noor', 'Abernathy'],
  ['Felix', 'Marchetti'],
  ['Ines', 'Okonkwo'],
  ['Rafael', 'Duarte'],
  ['Hana', 'Kowalczyk'],
  ['Oskar', 'Brennan'],
  ['Lucia', 'Ferreira'],
  ['Dmitri', 'Ashdown'],
].map(([firstName = '', lastName = '']) => ({
  firstName,
  lastName,
  email: `${firstName}.${lastName}@example.com`.toLowerCase(),
}));
