import { splitFullName } from '../../server/domain/user.js';

describe('splitFullName', () => {
  test.each([
    ['Thomas Anderson', 'Thomas', 'Anderson'],
    ['  Thomas   Anderson  ', 'Thomas', 'Anderson'],
    ['Grace Brewster Murray Hopper', 'Grace', 'Brewster Murray Hopper'],
    ['Ada\tLovelace', 'Ada', 'Lovelace'],
    ['Jean\n Luc  Picard', 'Jean', 'Luc  Picard'],
    ['Cher', 'Cher', ''],
    ['  Cher  ', 'Cher', ''],
    ['Zoë Ångström', 'Zoë', 'Ångström'],
  ])('%j → %j / %j', (name, firstName, lastName) => {
    expect(splitFullName(name)).toEqual({ firstName, lastName });
  });
});
