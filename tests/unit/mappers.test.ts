import type { User } from '../../server/domain/user.js';
import { fromDemoUserInput, toDemoUser, toDemoUserCreated, toDemoUserPage, toDemoUserReplaced } from '../../server/handlers/shape-a.mapper.js';
import { fromLocalUserInput, toLocalUser } from '../../server/handlers/shape-b.mapper.js';

const user: User = {
  id: 7,
  firstName: 'Ines',
  lastName: 'Okonkwo',
  email: 'ines@example.com',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-02-01T00:00:00.000Z',
  version: 3,
};

describe('shape A mapper', () => {
  test('GET shows snake_case name fields and nothing internal', () => {
    expect(toDemoUser(user)).toEqual({ id: 7, email: 'ines@example.com', first_name: 'Ines', last_name: 'Okonkwo' });
  });

  test('a page carries reqres-style counters', () => {
    expect(toDemoUserPage({ users: [user], more: true, page: 2, perPage: 1, total: 5, exact: true, totalPages: 5 })).toEqual({
      page: 2,
      per_page: 1,
      total: 5,
      total_pages: 5,
      data: [toDemoUser(user)],
    });
  });

  test('input splits the name; responses echo what was sent', () => {
    const input = { name: ' Ines  Okonkwo ', email: 'INES@example.com' };
    expect(fromDemoUserInput(input)).toEqual({ firstName: 'Ines', lastName: 'Okonkwo', email: 'INES@example.com' });
    expect(toDemoUserCreated(user, input)).toEqual({ id: 7, name: ' Ines  Okonkwo ', email: 'INES@example.com', createdAt: user.createdAt });
    expect(toDemoUserReplaced(user, input)).toEqual({ id: 7, name: ' Ines  Okonkwo ', email: 'INES@example.com', updatedAt: user.updatedAt });
  });
});

describe('shape B mapper', () => {
  test('the wire user is the domain user without store fields', () => {
    expect(toLocalUser(user)).toEqual({ id: 7, firstName: 'Ines', lastName: 'Okonkwo', email: 'ines@example.com' });
  });

  test('input maps member by member', () => {
    expect(fromLocalUserInput({ firstName: 'A', lastName: '', email: 'a@example.com' })).toEqual({ firstName: 'A', lastName: '', email: 'a@example.com' });
  });
});
