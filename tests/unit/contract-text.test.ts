import { loadContract } from '../../server/http/contract/ajv-contract.js';

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
// example would be sent unasked (`delay=2` held every answer 2 s on the sandbox, `If-None-Match: "3"`, a
// `Prefer` that chose an error). Required ones may have one: it is what the reader is asked for anyway.
const { operation } = loadContract();
const optionalParameters = operations.flatMap(([where, { operationId }]) =>
  operation(operationId!)
    .parameters.filter((parameter) => !parameter.required)
    .map((parameter) => [`${where} ${parameter.in} ${parameter.name}`, parameter as unknown as Record<string, unknown>] as const),
);

test.each(optionalParameters)('%s is optional and so has no example value for Try it out to send', (_where, parameter) => {
  expect([parameter.example, parameter.examples, (parameter.schema as Record<string, unknown>).example]).toEqual([undefined, undefined, undefined]);
});
