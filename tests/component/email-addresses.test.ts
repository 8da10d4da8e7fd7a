import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { contractDocument } from '../../generated/contract.js';
import { useTestServer } from '../support/test-server.js';

// The contract says exactly which e-mail addresses the service accepts (a pattern beside `format: email`), so
// that a tool which reads the contract alone (Prism, a test generator, a form) draws the line where the
// server does. Here a validator that knows nothing of the service reads the contract's Email schema, and its
// verdict is the server's, for addresses on both sides of the line.

const addFormats = addFormatsModule.default;
const sut = useTestServer();
const emailSchema = (contractDocument.components as { schemas: { Email: Record<string, unknown> } }).schemas.Email;
const { description: _description, example: _example, 'x-pattern-message': _message, ...schema } = emailSchema;
// Tools whose `format: email` is looser than the server's: ajv-formats' "fast" mode (it admits ann@localhost,
// 0@com, ann..lee@example.com), and one that checks no format at all. The pattern alone must draw the line.
const outsiders = {
  fast: addFormats(new Ajv({ strict: false }), { mode: 'fast' }).compile(schema),
  formatless: new Ajv({ strict: false, validateFormats: false }).compile(schema),
};

test.each([
  ['ann@example.com', true],
  ['ANN.Lee+tag@mail.example.co.uk', true],
  ["o'hara!#$%&*/=?^_`{|}~-@x.io", true],
  ['ann@localhost', false],
  ['"ann lee"@example.com', false],
  ['ann@[127.0.0.1]', false],
  ['0@com', false],
  ['ann@-example.com', false],
  ['ann..lee@example.com', false],
  ['zoë@example.com', false],
])('%s: accepted %s by the contract and by the server alike', async (address, accepted) => {
  expect({ fast: outsiders.fast(address), formatless: outsiders.formatless(address) }).toEqual({ fast: accepted, formatless: accepted });
  const res = await sut.api.post('/users', { firstName: 'Ann', lastName: 'Lee', email: address });
  expect(res.status).toBe(accepted ? 201 : 422);
});
