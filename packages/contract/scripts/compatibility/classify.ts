import { apiCompare, type Diff } from 'api-smart-diff';

export type ChangeKind = 'breaking' | 'compatible' | 'documentation';

export type Change = {
  kind: ChangeKind;
  /** Where in the current document (or, for a removal, the released one): a JSON Pointer. */
  pointer: string;
  /** What changed, in words. */
  description: string;
};

type Document = { paths?: Record<string, unknown>; webhooks?: Record<string, Record<string, Operation>> };
type Operation = {
  requestBody?: { description?: string; content?: unknown };
  responses?: unknown;
  [key: string]: unknown;
};

/** Where a webhook's operation stands in the documents api-smart-diff compares: a path of its own. */
const WEBHOOK_PATH = '/(webhook) ';

/**
 * api-smart-diff reads OpenAPI 3.0, which has no webhooks, and would leave their bodies
 * unclassified. A webhook's body is something the service sends, as it sends responses: each
 * webhook becomes a path whose 200 response is that body, and its changes are classified as
 * response changes are.
 */
const webhooksAsResponses = (document: Document): Document => {
  const paths = { ...document.paths };
  for (const [name, operations] of Object.entries(document.webhooks ?? {})) {
    const asPath: Record<string, Operation> = {};
    for (const [method, { requestBody, responses: _acknowledgements, ...operation }] of Object.entries(operations)) {
      asPath[method] = {
        ...operation,
        responses: { 200: { description: requestBody?.description ?? '', content: requestBody?.content ?? {} } },
      };
    }
    paths[`${WEBHOOK_PATH}${name}`] = asPath;
  }
  const { webhooks: _webhooks, ...rest } = document;
  return { ...rest, paths };
};

/** The path of a diff in the real document: a webhook's "200 response" is its request body. */
const realPath = (path: ReadonlyArray<string | number>): Array<string | number> => {
  const [section, key, method, ...rest] = path;
  if (section !== 'paths' || typeof key !== 'string' || !key.startsWith(WEBHOOK_PATH)) return [...path];
  const name = key.slice(WEBHOOK_PATH.length);
  if (rest[0] === 'responses' && rest[1] === '200') {
    return ['webhooks', name, method ?? '', 'requestBody', ...rest.slice(2)];
  }
  return ['webhooks', name, ...(method === undefined ? [] : [method]), ...rest];
};

const pointerOf = (path: ReadonlyArray<string | number>): string =>
  `#${path.map((part) => `/${String(part).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('')}`;

/** A schema keyword's position: under an operation's responses, or in a webhook's body (which the service sends). */
const isSent = (path: ReadonlyArray<string | number>): boolean =>
  path[0] === 'webhooks' ? path.includes('requestBody') : path.includes('responses');

const LENGTH_UNIT = ['info', 'x-length-unit'];

/**
 * Our rules, where api-smart-diff is lenient: what a client reads must not go away or widen.
 * Undefined leaves the library's classification.
 */
const stricter = (path: ReadonlyArray<string | number>, diff: Diff): ChangeKind | undefined => {
  const last = path.at(-1);
  const parent = path.at(-2);
  // Another count under the same maxLength: values the old count refused come back in answers.
  if (path.join('/') === LENGTH_UNIT.join('/')) return 'breaking';
  // A documented status removed: clients that handle it meet an answer they do not expect.
  if (parent === 'responses' && path.length === 5 && diff.action === 'remove') return 'breaking';
  if (!isSent(path)) {
    if (path[0] === 'webhooks' && parent === 'parameters') {
      // A header the service stops sending with a webhook: receivers that check it fail.
      if (diff.action === 'remove') return 'breaking';
      // One it starts sending, required or not: receivers that do not read it are not affected.
      if (diff.action === 'add') return 'compatible';
    }
    return undefined;
  }
  // A field the service no longer sends, or no longer always sends.
  if (parent === 'properties' && diff.action === 'remove') return 'breaking';
  if (parent === 'required' && diff.action === 'remove') return 'breaking';
  // A value clients have never seen: a switch over the known ones falls through.
  if (parent === 'enum' && diff.action === 'add') return 'breaking';
  // Another type or format of a value clients already parse.
  if ((last === 'type' || last === 'format') && diff.action !== 'add') return 'breaking';
  return undefined;
};

/** A keyword at `index`, not a property of that name (a field called `description` is data). */
const isKeyword = (path: ReadonlyArray<string | number>, index: number, keywords: readonly string[]): boolean =>
  keywords.includes(String(path[index])) && path[index - 1] !== 'properties';

/** Words for people: descriptions, summaries, examples and the list of tags change no request or answer. */
const isDocumentation = (path: ReadonlyArray<string | number>): boolean =>
  path[0] === 'tags' ||
  path.some((_, index) => isKeyword(path, index, ['example', 'examples'])) ||
  isKeyword(path, path.length - 1, ['description', 'summary', 'title']);

const KIND: Readonly<Record<Diff['type'], ChangeKind>> = {
  breaking: 'breaking',
  'non-breaking': 'compatible',
  deprecated: 'compatible',
  annotation: 'documentation',
  // What the library cannot classify (jsonSchemaDialect, say) is treated as the worst case.
  unclassified: 'breaking',
};

const describe = (diff: Diff, path: ReadonlyArray<string | number>): string => {
  if (path.join('/') === LENGTH_UNIT.join('/')) {
    // Documents before x-length-unit were generated when the contract counted UTF-16 code units.
    const unit = (value: unknown) => (typeof value === 'string' ? `${value}s` : 'UTF-16 code units');
    return (
      `[Replaced] what every maxLength counts: ${unit(diff.before)}, now ${unit(diff.after)}. Answers may carry ` +
      'strings the old count refused, which clients that validate answers by it (@org/plant-client before 1.0.0) reject'
    );
  }
  if (diff.description) {
    return path[0] === 'webhooks'
      ? diff.description.replace('Response 200 content', 'the webhook body')
      : diff.description;
  }
  const shown = (value: unknown) => (value === undefined ? '' : JSON.stringify(value).slice(0, 120));
  if (diff.action === 'add') return `[Added] ${String(path.at(-1))} ${shown(diff.after)}`.trim();
  if (diff.action === 'remove') return `[Removed] ${String(path.at(-1))} ${shown(diff.before)}`.trim();
  return `[Replaced] ${String(path.at(-1))}: ${shown(diff.before)} → ${shown(diff.after)}`;
};

/**
 * Every change from the released document to the current one, classified with api-smart-diff and
 * our stricter rules. Schemas and headers under `components` are compared where operations use
 * them (api-smart-diff resolves `$ref`s), so each change is named by the operation it affects.
 */
export const classifyChanges = (released: object, current: object): Change[] => {
  const { diffs } = apiCompare(webhooksAsResponses(released as Document), webhooksAsResponses(current as Document));
  return diffs
    .filter(({ path }) => !(path[0] === 'components' && (path[1] === 'schemas' || path[1] === 'headers')))
    .map((diff) => {
      const path = realPath(diff.path);
      return {
        kind: isDocumentation(path) ? 'documentation' : (stricter(path, diff) ?? KIND[diff.type]),
        pointer: pointerOf(path),
        description: describe(diff, path),
      };
    });
};
