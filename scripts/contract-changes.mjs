// What changed between two versions of the contract, and how far each change reaches: api-smart-diff
// classifies each change of an OpenAPI 3.0 document as breaking, non-breaking, deprecated, annotation or
// unclassified, resolving each $ref at the place that uses it. Three of its answers are replaced here:
// - security requirements: it calls a requirement added to an open operation non-breaking, and one
//   removed breaking; a client sees the opposite (compared below per operation, the document's default
//   included);
// - response headers' schemas: it leaves their changes unclassified, as if text; a header whose type changed
//   is parsed otherwise by every client (headerSchemaType below);
// - its descriptions: they name no subject for many changes ("[Added]  in header parameter") and misname
//   others (a response's media type as "Request Body content"), so each change is described here from
//   where it is in the document.
import { apiCompare } from 'api-smart-diff';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Components reached through $ref: api-smart-diff reports their changes again at each use, under paths. */
const REFERENCED = new Set(['schemas', 'parameters', 'responses', 'headers', 'requestBodies', 'examples', 'links', 'callbacks']);

/** The object a $ref names in `doc`, or the value itself. */
function resolve(doc, value) {
  let seen = 0;
  while (value && typeof value.$ref === 'string' && value.$ref.startsWith('#/') && seen++ < 16)
    value = value.$ref
      .slice(2)
      .split('/')
      .reduce((node, key) => node?.[key.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
  return value;
}

const code = (text) => `\`${text}\``;
/** A value short enough to print in a changelog line, or nothing. */
function shown(value) {
  if (value === undefined || (typeof value === 'object' && value !== null)) return undefined;
  const text = JSON.stringify(value);
  return text.length <= 60 && !text.includes('\\n') ? text : undefined;
}

/**
 * A schema's member, from the keys below the schema of `owner` (`query parameter \`q\``, `the request body
 * (application/json)`): `member \`[].email\` in ...`; a last key that is a keyword rather than a member is
 * named after it (`\`maxLength\` of member \`.name\` in ...`).
 */
function schemaSubject(keys, diff, owner) {
  let pointer = '';
  for (let index = 0; index < keys.length; index++) {
    const key = String(keys[index]);
    if (key === 'properties' && index + 1 < keys.length) pointer += `.${keys[++index]}`;
    else if (key === 'items') pointer += '[]';
    else if (key === 'additionalProperties') pointer += '.*';
    else if (['allOf', 'oneOf', 'anyOf'].includes(key) && index + 1 < keys.length) index++;
    else if (key === 'required' && index + 1 < keys.length) return `required member ${code(`${pointer}.${diff.before ?? diff.after}`)} in ${owner}`;
    else {
      const member = pointer ? `member ${code(pointer)} in ${owner}` : owner;
      return `${code(keys.slice(index).join('.'))} of ${member}`;
    }
  }
  return pointer ? `member ${code(pointer)} in ${owner}` : `schema of ${owner}`;
}

/** What a change under an operation is about, from the keys below `paths.<path>.<method>`. */
function operationSubject(keys, doc, operation, diff) {
  const [first, second, third, fourth, ...rest] = keys.map(String);
  if (first === 'parameters' && second !== undefined) {
    const parameter = resolve(doc, operation?.parameters?.[Number(second)]);
    const name = parameter ? `${parameter.in} parameter ${code(parameter.name)}` : `parameter ${second}`;
    if (third === undefined) return `${name}${parameter?.required ? ' (required)' : ' (optional)'}`;
    if (third === 'schema') return schemaSubject(keys.slice(3), diff, name);
    return `${code(keys.slice(2).join('.'))} of ${name}`;
  }
  if (first === 'parameters') return 'parameters';
  if (first === 'requestBody') {
    if (second === undefined) return 'request body';
    if (second === 'content' && third === undefined) return 'media types of the request body';
    if (second === 'content') {
      const body = `request body (${third})`;
      if (fourth === undefined) return `media type ${third} of the request body`;
      if (fourth === 'schema') return schemaSubject(rest, diff, `the ${body}`);
      return `${code([fourth, ...rest].join('.'))} of the ${body}`;
    }
    return `${code(keys.slice(1).join('.'))} of the request body`;
  }
  if (first === 'responses' && second !== undefined) {
    const response = `response ${second}`;
    if (third === undefined) return response;
    if (third === 'headers' && fourth !== undefined) {
      const header = `header ${code(fourth)} of ${response}`;
      if (rest.length === 0) return header;
      if (rest[0] === 'schema') return schemaSubject(rest.slice(1), diff, header);
      return `${code(rest.join('.'))} of ${header}`;
    }
    if (third === 'headers') return `headers of ${response}`;
    if (third === 'content' && fourth === undefined) return `media types of ${response}`;
    if (third === 'content') {
      if (rest.length === 0) return `media type ${fourth} of ${response}`;
      if (rest[0] === 'schema') return schemaSubject(rest.slice(1), diff, `${response} (${fourth})`);
      if (rest[0] === 'examples' && rest[1] !== undefined) return `example ${code(rest[1])} of ${response} (${fourth})`;
      return `${code(rest.join('.'))} of ${response} (${fourth})`;
    }
    return `${code(keys.slice(2).join('.'))} of ${response}`;
  }
  if (first === undefined) return 'operation';
  return code(keys.join('.'));
}

const VERBS = { add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' };

/** One change in words: the verb and subject, and the values when short (`"basic" → "bearer"`). */
function described(diff, before, after) {
  const path = diff.path.map(String);
  const doc = diff.action === 'add' ? after : before;
  let subject;
  if (path[0] === 'paths' && path.length === 2) subject = `path ${code(path[1])}`;
  else if (path[0] === 'paths') subject = operationSubject(path.slice(3), doc, resolve(doc, doc.paths?.[path[1]]?.[path[2]]), diff);
  else if (path[0] === 'components' && path[1] === 'securitySchemes')
    subject = path.length > 3 ? `${code(path.slice(3).join('.'))} of security scheme ${code(path[2])}` : `security scheme ${code(path[2])}`;
  else subject = code(path.join('.'));
  const [was, is] = [shown(diff.before), shown(diff.after)];
  let values = diff.action === 'replace' && was !== undefined && is !== undefined ? `: ${was} → ${is}` : '';
  // A map replaced whole (`headers:` left empty, say) is described by the members it lost and gained.
  const keys = (value) => (value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : []);
  if (diff.action === 'replace' && (keys(diff.before).length > 0 || keys(diff.after).length > 0)) {
    const [lost, gained] = [
      keys(diff.before).filter((key) => !keys(diff.after).includes(key)),
      keys(diff.after).filter((key) => !keys(diff.before).includes(key)),
    ];
    const parts = [lost.length > 0 && `removed ${lost.map(code).join(', ')}`, gained.length > 0 && `added ${gained.map(code).join(', ')}`].filter(Boolean);
    if (parts.length > 0) values = ` (${parts.join('; ')})`;
  }
  // A renamed key (a media type, say) is reported at the map that holds it, with the old and new key.
  if (diff.action === 'rename') return `renamed ${code(diff.before)} to ${code(diff.after)} in ${subject}`;
  return `${VERBS[diff.action] ?? diff.action} ${subject}${values}`;
}

/** Where in the contract a change is: the operation (`GET /users`), or nothing for the whole document. */
const where = (path) => (path[0] === 'paths' && path.length > 2 ? `${String(path[2]).toUpperCase()} ${path[1]}` : undefined);

/** The security requirements an operation has (its own, or the document's): open, or the sets of schemes. */
function requirements(doc, operation) {
  const listed = operation.security ?? doc.security ?? [];
  const alternatives = listed.map((requirement) => Object.keys(requirement).sort().join(' + '));
  return { open: alternatives.length === 0 || alternatives.includes(''), alternatives: alternatives.filter(Boolean) };
}

/** Each operation in both documents whose security requirements differ, classified as a client sees it. */
function securityChanges(before, after) {
  const changes = [];
  for (const [path, item] of Object.entries(before.paths ?? {}))
    for (const method of METHODS) {
      const [was, is] = [item?.[method], after.paths?.[path]?.[method]];
      if (!was || !is) continue;
      const [from, to] = [requirements(before, was), requirements(after, is)];
      const at = `${method.toUpperCase()} ${path}`;
      if (from.open && !to.open) changes.push({ type: 'breaking', at, description: `now requires credentials (${to.alternatives.map(code).join(' or ')})` });
      else if (!from.open && to.open) changes.push({ type: 'non-breaking', at, description: 'no longer requires credentials' });
      if (from.open || to.open) continue;
      for (const lost of from.alternatives.filter((one) => !to.alternatives.includes(one)))
        changes.push({ type: 'breaking', at, description: `no longer accepts security scheme ${code(lost)}` });
      for (const gained of to.alternatives.filter((one) => !from.alternatives.includes(one)))
        changes.push({ type: 'non-breaking', at, description: `also accepts security scheme ${code(gained)}` });
    }
  return changes;
}

const isSecurity = (path) => path[0] === 'security' || (path[0] === 'paths' && path[3] === 'security');

/** Keywords that bound a value: one removed from an answer lets it carry values its clients never saw. */
const BOUNDS = new Set(['maxLength', 'minLength', 'pattern', 'maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'enum', 'maxItems', 'minItems']);

/**
 * The class of a change to a response header's schema, which api-smart-diff leaves unclassified: its type or
 * format changed (a client parses it otherwise), or a bound removed (it may carry values it never did), is
 * breaking; a bound added or tightened narrows what clients get; anything else is text.
 */
function headerSchemaType(diff) {
  const path = diff.path.map(String);
  const at = path.indexOf('headers');
  if (path[0] !== 'paths' || path[3] !== 'responses' || at !== 5 || path[7] !== 'schema' || diff.type !== 'unclassified') return diff.type;
  const keyword = path[8];
  if (keyword === undefined || keyword === 'type' || keyword === 'format') return 'breaking';
  if (BOUNDS.has(keyword)) return diff.action === 'add' ? 'non-breaking' : 'breaking';
  return 'annotation';
}

/**
 * The changes from `before` to `after` (OpenAPI documents as data), each with its class, the operation it
 * is at (none for the document as a whole) and its description. Changes to info.version are not counted.
 */
export function contractChanges(before, after) {
  const { diffs } = apiCompare(before, after);
  const changes = diffs
    .filter((diff) => !(diff.path[0] === 'info' && diff.path[1] === 'version'))
    .filter((diff) => !(diff.path[0] === 'components' && REFERENCED.has(diff.path[1])))
    .filter((diff) => !isSecurity(diff.path))
    .map((diff) => ({ type: headerSchemaType(diff), at: where(diff.path), description: described(diff, before, after) }));
  return [...changes, ...securityChanges(before, after)];
}
