import { type ContractNode, readContract, resolver } from '../support/contract-document.js';
import { SANDBOX_RESET } from '../support/sandbox-reset.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// Tools that send requests from the contract alone (Dredd, Schemathesis's examples phase, a Postman import)
// take a header's value from its `example`; without one they send an empty header, which names no version
// (If-Match: 412) or no key (Idempotency-Key: 400). Each conditional or idempotency header of the contract
// carries an example that holds on a fresh store: sent with the operation's own examples, it gets the
// operation's success.

const contract = readContract();
const resolve = resolver(contract);
const HEADERS = ['If-Match', 'If-None-Match', 'Idempotency-Key'];
/** The success each operation's examples earn on a fresh store, the header's condition holding. */
const SUCCESS: Record<string, number> = { get: 304, put: 200, patch: 200, delete: 204, post: 201 };

const cases = Object.entries<ContractNode>(contract.paths).flatMap(([path, item]) =>
  Object.entries<ContractNode>(item)
    .filter(([method]) => method in SUCCESS)
    .map(([method, operation]) => ({ path, method, operation, parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve) }))
    .filter(({ parameters }) => parameters.some((parameter) => parameter.in === 'header' && HEADERS.includes(parameter.name))),
);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { SANDBOX: 'true' } });
});
afterAll(() => server?.cleanup());

test('the contract has such headers on the single-user operations and the creates', () => {
  expect(cases.map(({ method, path }) => `${method.toUpperCase()} ${path}`).sort()).toHaveLength(10);
});

test.each(cases.map((one) => [`${one.method.toUpperCase()} ${one.path}`, one] as const))(
  '%s: its header examples, with its other examples, get its success on a fresh store',
  async (_name, { path, method, operation, parameters }) => {
    const headers: Record<string, string> = {};
    let url = path;
    for (const parameter of parameters) {
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, String(parameter.example));
      if (parameter.in === 'header' && HEADERS.includes(parameter.name)) {
        expect({ header: parameter.name, example: parameter.example }).toEqual({ header: parameter.name, example: expect.any(String) });
        headers[parameter.name] = parameter.example;
      }
    }
    const body = operation.requestBody && resolve(operation.requestBody).content['application/json'];
    if (body) headers['Content-Type'] = 'application/json';
    await fetch(`${server.url}/__sandbox/reset`, SANDBOX_RESET);
    const response = await fetch(`${server.url}${url}`, {
      method: method.toUpperCase(),
      headers,
      body: body ? JSON.stringify(Object.values<ContractNode>(body.examples)[0]!.value) : undefined,
    });
    expect(response.status).toBe(SUCCESS[method]);
  },
);
