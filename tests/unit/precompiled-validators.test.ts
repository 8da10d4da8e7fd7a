import fc from 'fast-check';
import { routes } from '../../generated/routes.js';
import { runtimeContractDocument } from '../../generated/runtime-contract.js';
import { createAjvContract } from '../../server/http/contract/ajv-contract.js';
import { loadPrecompiledContract } from '../../server/http/contract/precompiled-contract.js';
import { compileRequestValidator, type RawRequest } from '../../server/http/contract/request-validation.js';
import { answerDelay } from '../../server/http/sandbox/answer-delay.js';
import { checkFirstUsers } from '../../server/startup/first-users.js';

// The MSW handlers and the npx sandbox validate with code ajv compiled ahead (generated/validators.ts); the
// server compiles the same schemas with ajv when it starts. Here both judge the same requests: they must
// accept the same ones, and refuse the others with the same problem, member by member.

const ahead = loadPrecompiledContract();
const atRunTime = createAjvContract(runtimeContractDocument);

/** What a validator made of a request: the values it read, or the problem it threw. */
function verdict<Raw>(validate: (raw: Raw) => unknown, raw: Raw): unknown {
  try {
    return { accepted: validate(raw) };
  } catch (problem) {
    return { refused: { ...(problem as object), message: (problem as Error).message } };
  }
}

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.integer().map(String),
  fc.constantFrom('', '0', '-1', '2', '1.5', '100', 'ada@example.com', 'last_name,-id', '"1"', '*'),
);
const value = fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null), fc.array(text, { maxLength: 2 }));

describe.each(routes.map((route) => [route.operationId, route] as const))('%s', (operationId, route) => {
  const compiled = compileRequestValidator(ahead, operationId);
  const reference = compileRequestValidator(atRunTime, operationId);
  const names = ahead.operation(operationId).parameters;
  const raw = (location: string) =>
    fc.dictionary(
      fc.constantFrom(...names.filter((p) => p.in === location).map((p) => (location === 'header' ? p.name.toLowerCase() : p.name)), 'other'),
      text,
      { maxKeys: 4 },
    );

  test('judges generated requests as ajv compiling at run time does', () => {
    fc.assert(
      fc.property(
        raw('path'),
        raw('query'),
        raw('header'),
        fc.oneof(fc.dictionary(fc.constantFrom('firstName', 'lastName', 'email', 'name', 'job', 'x'), value), value),
        (path, query, header, body) => {
          const request = { path, query, header, body: route.hasBody ? body : undefined } as RawRequest;
          expect(verdict(compiled, structuredClone(request))).toEqual(verdict(reference, structuredClone(request)));
        },
      ),
      { seed: 20261126, numRuns: 150 },
    );
  });
});

test('the delay parameter and the first users are checked ahead as at run time', () => {
  for (const delay of ['1.5', '11', '-1', 'x', undefined]) {
    const query = delay === undefined ? {} : { delay };
    expect(verdict(answerDelay(ahead, { min: 0, max: 0 }), query as never)).toEqual(verdict(answerDelay(atRunTime, { min: 0, max: 0 }), query as never));
  }
  const users = [
    { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    { firstName: '', email: 'no' },
    { firstName: 'A', lastName: 'B', email: 'a@example.com', admin: true },
  ];
  expect(checkFirstUsers(users, ahead)).toEqual(checkFirstUsers(users, atRunTime));
});
