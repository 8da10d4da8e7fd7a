import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { pageContract } from '../../server/http/docs/docs.js';

// Texts of the contract that /docs (Swagger UI) shows as plain text: a summary and a server's description are
// not Markdown there, so backticks would show as they are.

const { document } = loadContract();
const operations = Object.entries(document.paths as Record<string, Record<string, { summary?: string; operationId?: string }>>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => method !== 'parameters')
    .map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const),
);

test.each(operations)('%s has a summary in plain text', (_where, operation) => {
  expect(operation.summary).toMatch(/^[^`*_[\]]+$/);
});

test.each((document.servers as { url: string; description: string }[]).map((server) => [server.url, server.description] as const))(
  'the server %s is described in plain text',
  (_url, description) => {
    expect(description).toMatch(/^[^`*_[\]]+$/);
  },
);

// Swagger UI's Try it out fills each parameter with its `example` and sends it: an optional parameter with an
// example would be sent unasked (`delay=2` held every answer 2 s on the sandbox, `If-None-Match: "1"` turned a
// read into a 304, a `Prefer` that chose an error). The page loads its own view of the contract (pageContract),
// without them; required ones keep theirs: it is what the reader is asked for anyway.
const shown = pageContract(loadContract({ sandbox: true }).document) as { components: { parameters: Record<string, Record<string, unknown>> } };
const optionalParameters = Object.entries(shown.components.parameters)
  .filter(([, parameter]) => parameter.required !== true)
  .map(([name, parameter]) => [name, parameter] as const);

test('the sandbox variant has optional parameters to check', () => {
  expect(optionalParameters.map(([name]) => name)).toEqual(expect.arrayContaining(['IfMatch', 'IfNoneMatch', 'IdempotencyKey', 'SandboxDelay', 'Prefer']));
});

test.each(optionalParameters)("%s is optional and so has no example value for the reference page's Try it out to send", (_name, parameter) => {
  expect([parameter.example, parameter.examples, (parameter.schema as Record<string, unknown>).example]).toEqual([undefined, undefined, undefined]);
});
