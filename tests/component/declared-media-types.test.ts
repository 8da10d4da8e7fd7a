import { type ContractNode, readContract, resolver } from '../support/contract-document.js';
import { TEST_CREDENTIALS, useTestServer } from '../support/test-server.js';

// Tools that compare an answer's Content-Type with the contract's media type as strings (Dredd) find them
// equal: each GET's success declares the media type exactly as it is sent, its charset included.

const contract = readContract();
const resolve = resolver(contract);
const sut = useTestServer();
const basic = `Basic ${Buffer.from(`${TEST_CREDENTIALS.username}:${TEST_CREDENTIALS.password}`).toString('base64')}`;

const reads = Object.entries<ContractNode>(contract.paths)
  .filter(([, item]) => item.get)
  .map(([path, item]) => {
    const parameters = [...(item.parameters ?? []), ...(item.get.parameters ?? [])].map(resolve);
    const url = parameters
      .filter((parameter) => parameter.in === 'path')
      .reduce((at, parameter) => at.replace(`{${parameter.name}}`, String(parameter.example)), path);
    return [`GET ${path}`, url, Object.keys(resolve(item.get.responses['200']).content), item.get.security?.length > 0] as const;
  });

test.each(reads)('%s: its 200 is sent as the media type it declares', async (_name, url, declared, secured) => {
  const response = await fetch(`${sut.server.url}${url}`, { headers: secured ? { Authorization: basic } : {} });
  expect(response.status).toBe(200);
  expect(declared).toEqual([response.headers.get('content-type')]);
});
