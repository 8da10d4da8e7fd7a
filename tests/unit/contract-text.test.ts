import { loadContract } from '../../server/http/contract/contract.js';

// Texts of the contract that /docs (Swagger UI) shows as plain text: a summary and a server's description are
// not Markdown there, so backticks would show as they are.

const { document } = loadContract();
const operations = Object.entries(document.paths as Record<string, Record<string, { summary?: string; operationId?: string }>>).flatMap(([path, item]) =>
  Object.entries(item).filter(([method]) => method !== 'parameters').map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const),
);

test.each(operations)('%s has a summary in plain text', (_where, operation) => {
  expect(operation.summary).toMatch(/^[^`*_[\]]+$/);
});

test.each((document.servers as { url: string; description: string }[]).map((server) => [server.url, server.description] as const))('the server %s is described in plain text', (_url, description) => {
  expect(description).toMatch(/^[^`*_[\]]+$/);
});
