import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { EXCERPT_CHARACTERS, excerpt } from '../../server/http/errors/excerpt.js';
import { HttpProblem, PROBLEMS, problemDocument, type ProblemKind } from '../../server/http/errors/problem.js';

// The contract's Problem schema bounds every string; the catalogue must stay inside it, or a client that
// checks answers against the contract would refuse a real one.

const contract = loadContract();
const validate = contract.compile({ $ref: '#/components/schemas/Problem' });

test.each(Object.keys(PROBLEMS) as ProblemKind[])('%s is a problem the contract allows', (kind) => {
  const { body } = problemDocument(new HttpProblem(kind, 'Something went wrong.'), '/users/2');
  expect(validate(JSON.parse(body)) ? [] : validate.errors).toEqual([]);
});

describe('excerpt', () => {
  test.each([
    ['short text whole', 'abc', 'abc'],
    ['text of exactly the limit whole', 'a'.repeat(EXCERPT_CHARACTERS), 'a'.repeat(EXCERPT_CHARACTERS)],
    ['astral characters counted once each', '😀'.repeat(EXCERPT_CHARACTERS), '😀'.repeat(EXCERPT_CHARACTERS)],
    ['longer text cut, with an ellipsis', 'a'.repeat(EXCERPT_CHARACTERS + 1), `${'a'.repeat(EXCERPT_CHARACTERS)}…`],
    ['never half of a pair', `${'a'.repeat(EXCERPT_CHARACTERS - 1)}😀😀`, `${'a'.repeat(EXCERPT_CHARACTERS - 1)}😀…`],
  ])('%s', (_case, text, expected) => {
    expect(excerpt(text)).toBe(expected);
  });
});
