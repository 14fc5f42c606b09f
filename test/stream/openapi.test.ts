// The WebSocket routes, exchanges, calendar and market status are described in /v1/openapi.json,
// and the document stays valid OpenAPI 3.
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildTestApp } from '../helpers/app.ts';

/* eslint-disable @typescript-eslint/no-explicit-any */
let app: FastifyInstance;
let doc: any;
beforeAll(async () => {
  ({ app } = await buildTestApp());
  doc = (await app.inject({ url: '/v1/openapi.json' })).json();
});
afterAll(async () => { await app.close(); });

it('documents both WebSocket routes as GET with the protocol in the description', () => {
  for (const path of ['/v1/ws/stream', '/v1/ws/quotes']) {
    const op = doc.paths[path]?.get;
    expect(op, path).toBeDefined();
    expect(Object.keys(op.responses).sort()).toEqual(['101', '401', '403', '426', '429', '503']);
    expect(op.description).toContain('{"op":"subscribed","channel":"quotes","symbols":[…],"total":N}');
    expect(op.description).toContain('{"op":"error","code":400,"error":"INVALID_SYMBOL"');
  }
  expect(doc.paths['/v1/ws/quotes'].get.description).toContain('{"op":"subscribe","symbols":["600519.SH"]}');
});

it('documents exchanges, calendar and market status with their parameters', () => {
  expect(doc.paths['/v1/exchanges'].get.responses['200'].content['application/json'].schema.required).toContain('data');
  const ex = doc.paths['/v1/exchanges/{exchange}/instruments'].get;
  expect(ex.parameters.map((p: any) => `${p.in}:${p.name}`).sort()).toEqual(['path:exchange', 'query:type']);
  expect(ex.responses['200'].content['application/json'].schema.required.sort()).toEqual(['count', 'data', 'exchange']);
  const cal = doc.paths['/v1/calendar'].get;
  expect(cal.parameters.map((p: any) => `${p.name}:${Boolean(p.required)}`).sort()).toEqual(['end:false', 'market:true', 'product:false', 'start:false']);
  expect(doc.paths['/v1/market-status'].get.parameters.map((p: any) => p.name).sort()).toEqual(['market', 'product']);
});

it('is still valid OpenAPI 3', async () => {
  await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
});
