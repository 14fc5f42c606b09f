// A client generated from the served OpenAPI document accepts the app's real answers (issue 43
// item 9): openapi-typescript writes the document's types into a temp dir, and the TypeScript
// compiler checks a file that assigns the app's JSON answer of every operation (as an object
// literal, so a field the types do not name is an error too) to that operation's 200 type, named
// by its operationId. A deliberately wrong answer in a second file must not type-check.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/app.ts';
import { answer, docKeyStore, EXAMPLE_REQUESTS, servedDoc, type OpenApiDoc } from '../helpers/openapi.ts';

let app: FastifyInstance;
let doc: OpenApiDoc;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mdqs-openapi-client-'));
  // With a history store: the coverage operation reports on it.
  ({ app } = await buildTestApp({ keys: docKeyStore(), configure: (c) => { c.history = { ...c.history, enabled: true, sqlitePath: join(dir, 'history.sqlite') }; } }));
  doc = await servedDoc(app);
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The compiler's complaints about `files` (in `dir`), one line each. */
function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files.map((f) => join(dir, f)), {
    strict: true, noEmit: true, skipLibCheck: true, types: [],
    target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file === undefined ? '' : `${d.file.fileName.slice(dir.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} `;
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, '\n').slice(0, 400)}`;
  });
}

const okType = (operationId: string) => `operations[${JSON.stringify(operationId)}]['responses'][200]['content']['application/json']`;

it('the generated types accept the real answer of every operation, and refuse a wrong one', { timeout: 120_000 }, async () => {
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(structuredClone(doc) as never)));

  const lines = ["import type { operations } from './api';", ''];
  const answers: Record<string, unknown> = {};
  for (const [operationId, request] of Object.entries(EXAMPLE_REQUESTS)) {
    answers[operationId] = JSON.parse((await answer(app, request)).body);
    lines.push(`export const ${operationId}: ${okType(operationId)} = ${JSON.stringify(answers[operationId])};`);
  }
  writeFileSync(join(dir, 'answers.ts'), `${lines.join('\n')}\n`);

  // The controls: a price as text, a field the Quote does not have, a missing candle column.
  const quote = (answers.getQuotes as { data: Record<string, unknown>[] }).data[0];
  const { close: _close, ...candles } = (answers.getKlines as { data: Record<string, unknown> }).data;
  writeFileSync(join(dir, 'wrong.ts'), [
    "import type { operations } from './api';",
    `export const price: ${okType('getQuotes')} = ${JSON.stringify({ data: [{ ...quote, last_price: String(quote.last_price) }] })};`,
    `export const extra: ${okType('getQuotes')} = ${JSON.stringify({ data: [{ ...quote, bid: 1 }] })};`,
    `export const missing: ${okType('getKlines')} = ${JSON.stringify({ data: candles })};`,
  ].join('\n'));

  const errors = typeErrors(['answers.ts', 'wrong.ts']);
  expect(errors.filter((e) => !e.startsWith('wrong.ts:'))).toEqual([]);
  expect(errors.map((e) => e.split(' ')[0])).toEqual(['wrong.ts:2', 'wrong.ts:3', 'wrong.ts:4']);
});
