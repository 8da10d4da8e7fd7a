import fc from 'fast-check';
import type { Contract, Parameter, Schema, Validator } from '../../server/http/contract/contract.js';

// Schema → fast-check arbitraries, for the subset of JSON Schema the contract uses: objects with
// properties / required / additionalProperties: false, strings with minLength / maxLength / pattern /
// format email, integers with minimum / maximum, arrays, enums and `$ref` into components.schemas.
//
// `valid` generates values that satisfy a schema; `violations` lists, for each constraint of a schema,
// values that break exactly that constraint and nothing else. Parameters (path, query, header) travel
// as text, so they have text versions of both.

/** A value that breaks one constraint, and the constraint it breaks ("email: bad e-mail format"). */
export interface Violation<T = unknown> {
  readonly constraint: string;
  readonly value: fc.Arbitrary<T>;
}

/** A parameter value as sent: text, repeated text (query only), or absent. */
export type ParamText = string | readonly string[] | undefined;

/** Where a string travels; header values must be ByteStrings without control characters. */
export type Carrier = 'json' | 'path' | 'query' | 'header';

/** Parameter texts sent without percent-encoding, to try broken escapes themselves; every other text is encoded. */
export const UNENCODED_TEXTS: readonly string[] = ['%', '%zz', '%00', '%C0%AF', '%E2%82'];

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Code points, as JSON Schema (and ajv) counts the length of a string. */
export const lengthOf = (text: string) => [...text].length;

/** A JSON object with the given members, including `__proto__`/`constructor`, which `{}` literals treat specially. */
export function jsonObject(entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** Characters that may stand in a header value and survive fetch's trimming: visible ASCII, SP and HTAB inside, obs-text. */
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom(' ', '\t') },
  { weight: 1, arbitrary: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)) },
);
const trimmedForHeader = (text: string) => text.replace(/^[ \t]+|[ \t]+$/g, '');
/** A header value fetch sends as it is (RFC 9110 field-value: visible ASCII, obs-text, SP/HTAB inside). */
/** Control white space (which regex `\s` allows but a header cannot carry) as plain spaces, ends trimmed. */
const headerize = (text: string) => trimmedForHeader(text.replace(/[\r\n\v\f]/g, ' '));
export const sendableInHeader = (text: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(text) && trimmedForHeader(text) === text;

/** Characters that trip up storage and text handling: NUL and other controls, separators, BOM, marks, astral. */
const NASTY = fc.constantFrom(
  'a',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u2028',
  '\u2029',
  '\u200b',
  '\u200e',
  '\ufeff',
  '\u0301',
  '\uffff',
  '\u{1f600}',
  '\u{10ffff}',
  "'",
  '"',
  '\\',
  '%',
  '<',
  ' ',
  'É',
);

/** Arbitrary strings of the given carrier, with lengths counted in code points. */
function text(carrier: Carrier, minLength: number, maxLength: number): fc.Arbitrary<string> {
  if (maxLength < minLength) throw new Error(`no string has ${minLength} to ${maxLength} characters`);
  if (carrier === 'header') {
    return fc
      .string({ unit: headerChar, minLength, maxLength })
      .filter((s) => trimmedForHeader(s) === s && lengthOf(s) >= minLength && lengthOf(s) <= maxLength);
  }
  const units = ['grapheme-ascii', 'grapheme', 'binary', NASTY] as const;
  const random = fc.oneof(...units.map((unit) => fc.string({ unit, minLength, maxLength: Math.min(maxLength, minLength + 40) })));
  // The boundaries: exactly the shortest and the longest length allowed.
  const exact = (n: number) => fc.oneof(...units.map((unit) => fc.string({ unit, minLength: n, maxLength: n })));
  return fc
    .oneof({ weight: 6, arbitrary: random }, { weight: 1, arbitrary: exact(minLength) }, { weight: 1, arbitrary: exact(maxLength) })
    .map((s) => [...s].slice(0, maxLength).join(''))
    .filter((s) => lengthOf(s) >= minLength && lengthOf(s) <= maxLength);
}

/** Keys of a JSON object, for unknown members: plain names, look-alikes of known ones, and the ones parsers fear. */
function unknownKey(known: readonly string[]): fc.Arbitrary<string> {
  const lookAlikes = known.flatMap((k) => [k.toUpperCase(), `${k} `, `_${k}`, `${k}2`]);
  return fc
    .oneof(fc.string({ minLength: 0, maxLength: 12 }), fc.constantFrom('id', 'createdAt', 'version', '__proto__', 'constructor', 'admin', ...lookAlikes))
    .filter((k) => !known.includes(k));
}

/** JSON values of every type but the ones listed. */
function jsonValueNotOf(types: readonly string[]): fc.Arbitrary<unknown> {
  // The plainest value of each type, then random ones.
  const byType: Record<string, [unknown, fc.Arbitrary<unknown>]> = {
    string: ['', fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('1', 'true', 'null', '{}'))],
    integer: [0, fc.integer()],
    number: [0.5, fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n))],
    boolean: [false, fc.boolean()],
    null: [null, fc.constant(null)],
    array: [[], fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), { maxLength: 3 })],
    object: [{}, fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 })],
  };
  // A JSON integer is a number too.
  const excluded = new Set(types.flatMap((t) => (t === 'number' ? ['number', 'integer'] : [t])));
  const allowed = Object.entries(byType).filter(([type]) => !excluded.has(type));
  return fc.oneof(fc.constantFrom(...allowed.map(([, [plain]]) => plain)), ...allowed.map(([, [, random]]) => random));
}

/** The generators of one contract. */
export function schemaArbitraries(contract: Contract) {
  const validators = new Map<string, Validator>();
  /** ajv's verdict on a value (on a copy: the contract's ajv fills in defaults). */
  function satisfies(schema: Schema, value: unknown): boolean {
    const key = JSON.stringify(schema);
    let validate = validators.get(key);
    // Wrapped as a member, as the server checks parameters: ajv (strict) refuses a `default` at the root.
    if (!validate) validators.set(key, (validate = contract.compile({ type: 'object', required: ['v'], properties: { v: schema } })));
    return validate({ v: value === undefined ? value : structuredClone(value) });
  }

  /** The schema itself, `$ref`s followed. */
  const deref = (schema: unknown): Schema => contract.resolve<Schema>(schema);

  function regexOf(schema: Schema): RegExp | undefined {
    return typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  }

  // The contract writes out what an e-mail address is as a pattern beside `format: email` (the server checks the
  // pattern); an address is what that pattern accepts, whatever its length.
  const emailPattern = deref({ $ref: '#/components/schemas/Email' }).pattern as string;
  const isEmail = (value: string) => satisfies({ type: 'string', pattern: emailPattern }, value);

  /** E-mail addresses ajv accepts, of the given lengths; the longest ones built to measure. */
  function email(minLength: number, maxLength: number): fc.Arbitrary<string> {
    const domains = fc.constantFrom('example.com', 'mail.example.org', 'x.io', 'sub-domain.example.co.uk');
    const measured = fc
      .tuple(fc.integer({ min: Math.max(minLength, 8), max: maxLength }), domains)
      .map(([length, domain]) => `${'a'.repeat(Math.max(1, length - domain.length - 1))}@${domain}`);
    return fc
      .oneof({ weight: 4, arbitrary: fc.emailAddress() }, { weight: 1, arbitrary: measured })
      .filter((s) => lengthOf(s) >= minLength && lengthOf(s) <= maxLength && isEmail(s));
  }

  function stringBounds(schema: Schema): { min: number; max: number } {
    const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : Math.max(min + 50, 50);
    return { min, max };
  }

  /** Strings that satisfy every constraint of a string schema. */
  function validString(schema: Schema, carrier: Carrier): fc.Arbitrary<string> {
    const { min, max } = stringBounds(schema);
    const regex = regexOf(schema);
    let arb: fc.Arbitrary<string>;
    if (schema.format === 'email') arb = email(min, max);
    else if (schema.format === 'date-time') arb = fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString());
    else if (regex) {
      const matching = fc.stringMatching(regex, { maxLength: max }).map((s) => (carrier === 'header' ? headerize(s) : s));
      arb = fc.oneof(matching, text(carrier, min, max));
    } else arb = text(carrier, min, max);
    return arb.filter(
      (s) => lengthOf(s) >= min && lengthOf(s) <= max && (!regex || regex.test(s)) && (carrier !== 'header' || sendableInHeader(s)) && satisfies(schema, s),
    );
  }

  function integerBounds(schema: Schema): { min: number; max: number } {
    return {
      min: typeof schema.minimum === 'number' ? schema.minimum : INT32_MIN,
      max: typeof schema.maximum === 'number' ? schema.maximum : INT32_MAX,
    };
  }

  /** Values that satisfy the schema. */
  function valid(raw: unknown, carrier: Carrier = 'json'): fc.Arbitrary<unknown> {
    const schema = deref(raw);
    let arb: fc.Arbitrary<unknown>;
    if (Array.isArray(schema.enum)) arb = fc.constantFrom(...(schema.enum as unknown[]));
    else if (schema.type === 'string') arb = validString(schema, carrier);
    else if (schema.type === 'integer') arb = fc.integer(integerBounds(schema));
    else if (schema.type === 'number') {
      const { min, max } = integerBounds(schema);
      arb = fc.double({ min, max, noNaN: true });
    } else if (schema.type === 'boolean') arb = fc.boolean();
    else if (schema.type === 'array') {
      const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const maxLength = typeof schema.maxItems === 'number' ? schema.maxItems : minLength + 4;
      arb = fc.array(valid(schema.items ?? {}, carrier), { minLength, maxLength });
    } else if (schema.type === 'object' || schema.properties) {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = (schema.required ?? []) as string[];
      const model = Object.fromEntries(Object.entries(properties).map(([name, inner]) => [name, valid(inner, carrier)]));
      arb = fc.record(model, { requiredKeys: required }).map((object) => jsonObject(Object.entries(object)));
    } else throw new Error(`The fuzzer cannot generate values for the schema ${JSON.stringify(schema)}`);
    return arb.filter((value) => satisfies(schema, value));
  }

  /**
   * Strings that match a pattern and are at least `length` long, for patterns that random long text never
   * matches: a short match with one of its characters repeated (`"3"` → `"3333…"`), or the whole match
   * repeated, joined by one of its characters (`"email,id"` → `"email,id,email,id…"`), for patterns of words.
   * Only those that still match are kept, so at least one of the two must fit the pattern.
   */
  function stretched(regex: RegExp, length: number, carrier: Carrier): fc.Arbitrary<string> {
    const matching = fc.stringMatching(regex, { maxLength: 40 }).map((s) => (carrier === 'header' ? headerize(s) : s));
    const nonEmpty = matching.filter((v) => v.length > 0);
    const oneRepeated = fc.tuple(nonEmpty, fc.nat(), fc.nat({ max: 30 })).map(([v, at, extra]) => {
      const chars = [...v];
      const i = at % chars.length;
      return [...chars.slice(0, i), chars[i]!.repeat(length - chars.length + 1 + extra), ...chars.slice(i + 1)].join('');
    });
    const wholeRepeated = fc.tuple(nonEmpty, fc.nat()).map(([v, at]) => {
      const chars = [...v];
      const joiner = chars[at % chars.length]!;
      return Array.from({ length: Math.ceil((length + 1) / (v.length + 1)) + 1 }, () => v).join(joiner);
    });
    return fc.oneof(oneRepeated, wholeRepeated).filter((s) => regex.test(s) && lengthOf(s) >= length);
  }

  /** Strings that break one constraint of a string schema each, keeping the others. */
  function stringViolations(schema: Schema, carrier: Carrier): Violation<string>[] {
    const { min, max } = stringBounds(schema);
    const regex = regexOf(schema);
    const isValidFormat = (s: string) => (schema.format === 'email' ? isEmail(s) : true);
    // An e-mail address's pattern is its format written out: breaking one is breaking the other.
    const patternIsFormat = schema.format === 'email';
    const keepsOthers = (s: string, broken: 'min' | 'max' | 'pattern' | 'format') =>
      (broken === 'min' || lengthOf(s) >= min) &&
      (broken === 'max' || typeof schema.maxLength !== 'number' || lengthOf(s) <= max) &&
      (broken === 'pattern' || (patternIsFormat && broken === 'format') || !regex || regex.test(s)) &&
      (broken === 'format' || isValidFormat(s));
    const out: Violation<string>[] = [];
    if (min > 0) {
      const shorter = min === 1 ? fc.constant('') : text(carrier, 0, min - 1);
      out.push({ constraint: min === 1 ? 'empty (minLength 1)' : `shorter than ${min}`, value: shorter.filter((s) => !(lengthOf(s) >= min)) });
    }
    if (typeof schema.maxLength === 'number') {
      const longer =
        schema.format === 'email'
          ? fc
              .tuple(fc.integer({ min: max + 1, max: max + 40 }), fc.constantFrom('example.com', 'x.io'))
              .map(([length, domain]) => `${'b'.repeat(length - domain.length - 1)}@${domain}`)
          : fc.oneof(
              text(carrier, max + 1, max + 30),
              fc.integer({ min: max + 1, max: max + 30 }).map((n) => 'x'.repeat(n)),
              ...(regex ? [stretched(regex, max + 1, carrier)] : []),
            );
      out.push({ constraint: `longer than ${max}`, value: longer.filter((s) => lengthOf(s) > max && keepsOthers(s, 'max')) });
    }
    if (regex && !patternIsFormat) {
      // Blank text breaks "must contain a non-blank character"; odd characters break most other patterns.
      const blank = fc.string({
        unit: fc.constantFrom(' ', '\t', ...(carrier === 'header' ? [] : ['\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff'])),
        minLength: 1,
        maxLength: 20,
      });
      const odd = fc.string({ unit: fc.constantFrom('a', '"', ' ', 'é', '\u007f', ',', 'W/', '*', '\\'), minLength: 1, maxLength: 20 });
      // At most 512 characters: 8,192 random characters of a long parameter (a cursor), percent-encoded, make
      // a request line longer than any server reads (431), which says nothing of the pattern.
      const breaking = text(carrier, Math.max(min, 1), Math.min(max, Math.max(min, 512)));
      const candidates = carrier === 'header' ? fc.oneof(odd, breaking) : fc.oneof(blank, odd, breaking);
      out.push({ constraint: `not matching /${schema.pattern}/`, value: candidates.filter((s) => !regex.test(s) && keepsOthers(s, 'pattern')) });
    }
    if (schema.format === 'email') {
      const mutated = email(1, max).chain((address) => {
        const at = address.indexOf('@');
        return fc.constantFrom(
          address.replace('@', ''),
          address.replace('@', '@@'),
          `${address.slice(0, at)} ${address.slice(at)}`,
          `@${address.slice(at + 1)}`,
          `${address.slice(0, at + 1)}`,
          `${address}.`,
          `.${address}`,
          `${address.slice(0, at)}@-${address.slice(at + 1)}`,
          `${address.slice(0, at)}@${address.slice(at + 1)}..com`,
          `"${address.slice(0, at)}"${address.slice(at)}`,
          `${address.slice(0, at)}é${address.slice(at)}`,
          `${address.slice(0, at)}@[127.0.0.1]`,
        );
      });
      const candidates = fc.oneof(mutated, text(carrier, Math.max(min, 1), Math.min(max, 30)));
      out.push({ constraint: 'bad e-mail format', value: candidates.filter((s) => !isEmail(s) && keepsOthers(s, 'format')) });
    }
    if (Array.isArray(schema.enum)) {
      out.push({ constraint: 'not in the enum', value: text(carrier, 0, 20).filter((s) => !(schema.enum as unknown[]).includes(s)) });
    }
    return carrier === 'header' ? out.map((v) => ({ ...v, value: v.value.filter(sendableInHeader) })) : out;
  }

  /** JSON values that break one constraint each: wrong type, bounds, pattern, format, members. */
  function violations(raw: unknown, label = ''): Violation[] {
    const schema = deref(raw);
    const at = (constraint: string) => (label ? `${label}: ${constraint}` : constraint);
    const types = typeof schema.type === 'string' ? [schema.type] : [];
    const out: Violation[] = [];
    if (types.length > 0) out.push({ constraint: at(`wrong JSON type (not ${types.join('/')})`), value: jsonValueNotOf(types) });
    if (schema.type === 'string') {
      out.push(...stringViolations(schema, 'json').map((v) => ({ constraint: at(v.constraint), value: v.value as fc.Arbitrary<unknown> })));
    } else if (schema.type === 'integer' || schema.type === 'number') {
      const { min, max } = integerBounds(schema);
      if (typeof schema.minimum === 'number') out.push({ constraint: at(`below minimum ${min}`), value: fc.integer({ min: min - 1e6, max: min - 1 }) });
      if (typeof schema.maximum === 'number') out.push({ constraint: at(`above maximum ${max}`), value: fc.integer({ min: max + 1, max: max + 1e6 }) });
      if (schema.type === 'integer') {
        out.push({ constraint: at('decimal'), value: fc.tuple(fc.integer({ min, max: max - 1 }), fc.constantFrom(0.5, 0.25, 0.001)).map(([n, f]) => n + f) });
      }
    } else if (schema.type === 'array') {
      if (typeof schema.minItems === 'number' && schema.minItems > 0) {
        out.push({ constraint: at(`fewer than ${schema.minItems} items`), value: fc.array(valid(schema.items ?? {}), { maxLength: schema.minItems - 1 }) });
      }
      if (typeof schema.maxItems === 'number') {
        out.push({
          constraint: at(`more than ${schema.maxItems} items`),
          value: fc.array(valid(schema.items ?? {}), { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 3 }),
        });
      }
      for (const item of violations(schema.items ?? {}, `${label}[]`)) {
        out.push({
          constraint: item.constraint,
          value: fc.tuple(fc.array(valid(schema.items ?? {}), { maxLength: 2 }), item.value).map(([items, bad]) => [...items, bad]),
        });
      }
    } else if (schema.type === 'object' || schema.properties) {
      const properties = (schema.properties ?? {}) as Record<string, unknown>;
      const required = (schema.required ?? []) as string[];
      const base = valid(schema) as fc.Arbitrary<Record<string, unknown>>;
      const without = (object: Record<string, unknown>, name: string) => jsonObject(Object.entries(object).filter(([key]) => key !== name));
      for (const name of required) {
        out.push({ constraint: at(`${name}: missing (required)`), value: base.map((object) => without(object, name)) });
      }
      if (schema.additionalProperties === false) {
        const extra = fc.tuple(base, unknownKey(Object.keys(properties)), fc.jsonValue({ maxDepth: 1 }));
        out.push({ constraint: at('unknown member'), value: extra.map(([object, key, value]) => jsonObject([...Object.entries(object), [key, value]])) });
      }
      for (const [name, inner] of Object.entries(properties)) {
        for (const broken of violations(inner, name)) {
          out.push({
            constraint: label ? `${label}.${broken.constraint}` : broken.constraint,
            value: fc.tuple(base, broken.value).map(([object, value]) => jsonObject([...Object.entries(without(object, name)), [name, value]])),
          });
        }
      }
    }
    return out.map((v) => ({ ...v, value: v.value.filter((value) => !satisfies(schema, value)) }));
  }

  /** A parameter's schema, `$ref`s followed. */
  const paramSchema = (param: Parameter) => deref(param.schema);

  /** Text of a valid value of a parameter. */
  function validParamText(param: Parameter): fc.Arbitrary<string> {
    const schema = paramSchema(param);
    const carrier: Carrier = param.in === 'header' ? 'header' : param.in === 'path' ? 'path' : 'query';
    return valid(schema, carrier).map((value) => String(value));
  }

  /** Texts that break one constraint of a parameter each. */
  function paramViolations(param: Parameter): Violation<ParamText>[] {
    const schema = paramSchema(param);
    const out: Violation<ParamText>[] = [];
    if (param.required && param.in !== 'path') out.push({ constraint: 'missing (required)', value: fc.constant(undefined) });
    if (schema.type === 'integer' || schema.type === 'number') {
      const { min, max } = integerBounds(schema);
      const notInteger = fc
        .oneof(
          fc.string({ minLength: 1, maxLength: 12 }),
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
          fc.constantFrom('abc', '1e3', '0x10', ' 7', '7 ', '+5', '1,2', 'one', 'NaN', 'Infinity', '-', '١٢', '１２', 'true', 'null', '[1]'),
          ...(param.in === 'header' ? [] : [fc.constantFrom(...UNENCODED_TEXTS)]),
          fc.integer({ min: 1, max: 99 }).map((n) => `${n}abc`),
        )
        // "." and ".." are dot segments: URL normalisation removes them before the request leaves.
        .filter((s) => !/^-?\d+$/.test(s) && s !== '.' && s !== '..' && (param.in !== 'header' || trimmedForHeader(s) === s));
      out.push({ constraint: 'not an integer', value: notInteger });
      if (typeof schema.minimum === 'number') {
        out.push({
          constraint: `below minimum ${min}`,
          value: fc
            .oneof(fc.integer({ min: Math.max(INT32_MIN, min - 1000), max: min - 1 }), fc.bigInt({ min: -(10n ** 30n), max: BigInt(min - 1) }))
            .map(String),
        });
      }
      if (typeof schema.maximum === 'number') {
        out.push({
          constraint: `above maximum ${max}`,
          value: fc.oneof(fc.integer({ min: max + 1, max: max + 1000 }), fc.bigInt({ min: BigInt(max) + 1n, max: 10n ** 30n })).map(String),
        });
      }
      out.push({
        constraint: 'decimal',
        value: fc.tuple(fc.integer({ min, max: Math.max(min, max - 1) }), fc.constantFrom('.5', '.0', '.25', '.999')).map(([n, f]) => `${n}${f}`),
      });
      out.push({ constraint: 'empty', value: fc.constant('') });
    } else if (schema.type === 'string') {
      const carrier: Carrier = param.in === 'header' ? 'header' : 'query';
      out.push(...stringViolations(schema, carrier));
    }
    if (param.in === 'query') {
      out.push({ constraint: 'given twice', value: fc.tuple(validParamText(param), validParamText(param)) });
    }
    return out;
  }

  return { deref, satisfies, valid, violations, validParamText, paramViolations };
}

export type SchemaArbitraries = ReturnType<typeof schemaArbitraries>;
