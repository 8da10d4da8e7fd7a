import { loadContract } from '../../server/http/contract.js';
import { HttpProblem } from '../../server/http/problem.js';
import { compileRequestValidator } from '../../server/http/request-validation.js';

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
    expect(listDemoUsers({ path: {}, query: {}, body: undefined }).query).toEqual({ page: 1, per_page: 6 });
  });

  test('decimal digits become integers', () => {
    expect(getUser({ path: { id: '42' }, query: {}, body: undefined }).path).toEqual({ id: 42 });
  });

  test.each(['1e3', '0x10', ' 7', '7 ', '+7', '', '٣'])('the id %j is not an integer', (id) => {
    const problem = problemOf(() => getUser({ path: { id }, query: {}, body: undefined }));
    expect(problem.kind).toBe('invalid-parameter');
    expect(problem.extras.errors).toEqual([{ path: '/id', message: 'must be integer' }]);
  });

  test('the body is checked with every error listed', () => {
    const createUser = compileRequestValidator(contract, 'createUser');
    const problem = problemOf(() => createUser({ path: {}, query: {}, body: {} }));
    expect(problem.kind).toBe('validation-failed');
    expect(problem.extras.errors).toEqual([
      { path: '/firstName', message: 'is required' },
      { path: '/lastName', message: 'is required' },
      { path: '/email', message: 'is required' },
    ]);
  });
});
