import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { HttpProblem } from '../../server/http/errors/problem.js';
import { compileRequestValidator } from '../../server/http/contract/request-validation.js';

const contract = loadContract();
const listDemoUsers = compileRequestValidator(contract, 'listDemoUsers');
const getUser = compileRequestValidator(contract, 'getUser');

function problemOf(run: () => unknown): HttpProblem {
  try {
    run();
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    throw error;
  }
  throw new Error('expected an HttpProblem');
}

describe('request validation from the contract', () => {
  test('query defaults come from the contract', () => {
    expect(listDemoUsers({ path: {}, query: {}, header: {}, body: undefined }).query).toEqual({ page: 1, per_page: 6 });
  });

  test('decimal digits become integers', () => {
    expect(getUser({ path: { id: '42' }, query: {}, header: {}, body: undefined }).path).toEqual({ id: 42 });
  });

  test('only declared parameters are kept: locations the operation declares none in yield nothing', () => {
    const raw = { path: { id: '7', other: '8' }, query: { page: '2' }, header: { 'if-match': '"1"' }, body: undefined };
    expect(getUser(raw)).toEqual({ path: { id: 7 }, query: {}, header: {}, body: undefined });
  });

  test.each(['1e3', '0x10', ' 7', '7 ', '+7', '', '٣'])('the id %j is not an integer', (id) => {
    const problem = problemOf(() => getUser({ path: { id }, query: {}, header: {}, body: undefined }));
    expect(problem.kind).toBe('invalid-parameter');
    expect(problem.extras.errors).toEqual([{ path: '/id', message: 'must be integer' }]);
  });

  test('the body is checked with every error listed', () => {
    const createUser = compileRequestValidator(contract, 'createUser');
    const problem = problemOf(() => createUser({ path: {}, query: {}, header: {}, body: {} }));
    expect(problem.kind).toBe('validation-failed');
    expect(problem.extras.errors).toEqual([
      { path: '/firstName', message: 'is required' },
      { path: '/lastName', message: 'is required' },
      { path: '/email', message: 'is required' },
    ]);
  });

  test('declared headers are read case-insensitively and kept under their contract names', () => {
    const replaceUser = compileRequestValidator(contract, 'replaceUser');
    const body = { firstName: 'A', lastName: 'B', email: 'a@example.com' };
    const valid = replaceUser({ path: { id: '1' }, query: {}, header: { 'if-match': '"3", W/"2"', 'x-other': 'y' }, body });
    expect(valid.header).toEqual({ 'If-Match': '"3", W/"2"' });
  });

  test.each(['3', '"3', '"3",', 'W/3', '* , "3"'])('the If-Match %j is a 400 naming the header', (ifMatch) => {
    const deleteUser = compileRequestValidator(contract, 'deleteUser');
    const problem = problemOf(() => deleteUser({ path: { id: '1' }, query: {}, header: { 'if-match': ifMatch }, body: undefined }));
    expect(problem.kind).toBe('invalid-parameter');
    expect(problem.extras.errors?.[0]?.path).toBe('/If-Match');
  });
});
