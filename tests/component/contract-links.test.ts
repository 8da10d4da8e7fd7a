import { routes } from '../../generated/routes.js';
import { collectExamples, contract, exampleRequest } from '../support/contract-examples.js';
import { useTestServer } from '../support/test-server.js';

// The contract's links (create → read, replace, change, delete) are what stateful tools and /docs follow:
// each must name an operation and parameters the contract has, and, followed from a real answer, work.

const sut = useTestServer();

interface Link {
  readonly operationId: string;
  readonly parameters: Record<string, string>;
}

/** Every link of every answer: the operation that answers, its status, and the link by name. */
const links = Object.entries(contract.document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => method !== 'parameters')
    .flatMap(([method, operation]) =>
      Object.entries(operation.responses as Record<string, unknown>).flatMap(([status, raw]) =>
        Object.entries(contract.resolve<{ links?: Record<string, unknown> }>(raw).links ?? {}).map(
          ([name, link]) => [`${method.toUpperCase()} ${path} ${status} → ${name}`, { method, path, status, link: contract.resolve<Link>(link) }] as const,
        ),
      ),
    ),
);

test('both creates link to reading, replacing, changing and deleting what they created', () => {
  expect(links.map(([label]) => label.split(' → ')[1]).sort()).toEqual([
    'deleteDemoUser',
    'deleteUser',
    'getDemoUser',
    'getUser',
    'patchDemoUser',
    'patchUser',
    'replaceDemoUser',
    'replaceUser',
  ]);
});

/** A runtime expression (OpenAPI 3.0 §4.7.21.4) of the ones the contract uses, on a real answer. */
function evaluate(expression: string, response: Response, body: unknown): string {
  const pointer = /^\$response\.body#(\/.*)$/.exec(expression)?.[1];
  if (pointer !== undefined)
    return String(
      pointer
        .split('/')
        .slice(1)
        .reduce<any>((node, key) => node?.[key], body),
    );
  const header = /^\$response\.header\.(.+)$/.exec(expression)?.[1];
  if (header !== undefined) return response.headers.get(header) ?? '';
  throw new Error(`an expression this test does not read: ${expression}`);
}

test.each(links)('%s works from a real answer', async (_label, { method, path, status, link }) => {
  const example = collectExamples().find(
    (candidate) => candidate.where === `${method.toUpperCase()} ${path}` && candidate.status === status && candidate.request,
  );
  const created = await fetch(exampleRequest(sut.server.url, example!.request as Parameters<typeof exampleRequest>[1]));
  expect(String(created.status)).toBe(status);
  const body = await created.json();

  const route = routes.find((candidate) => candidate.operationId === link.operationId)!;
  const declared = contract.operation(link.operationId).parameters;
  let target: string = route.path;
  const headers = new Headers();
  for (const [name, expression] of Object.entries(link.parameters)) {
    const [location, parameter] = name.includes('.') ? (name.split(/\.(.*)/) as [string, string]) : ['path', name];
    expect(declared.some((p) => p.in === location && p.name === parameter)).toBe(true);
    const value = evaluate(expression, created, body);
    if (location === 'path') target = target.replace(`{${parameter}}`, encodeURIComponent(value));
    else headers.set(parameter, value);
  }
  const requestBody = contract.document.paths as Record<string, Record<string, any>>;
  const bodyExample = route.hasBody
    ? Object.values(contract.resolve<any>(requestBody[route.path]![route.method.toLowerCase()].requestBody).content as Record<string, any>)[0].examples
    : undefined;
  if (bodyExample) headers.set('content-type', route.bodyTypes[0]!);
  const followed = await fetch(`${sut.server.url}${target}`, {
    method: route.method,
    headers,
    body: bodyExample ? JSON.stringify(Object.values(bodyExample as Record<string, { value: unknown }>)[0]!.value) : undefined,
  });
  expect(followed.status).toBeLessThan(300);
});
