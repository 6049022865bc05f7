/**
 * What the two peers, (b) and (g), write alike with the same stack: a createPlant contract, a bearer
 * check as global middleware, zod validation of the body, and Express with `express.json()` and its
 * default settings (etag, x-powered-by, extended query parser).
 */
import { initContract } from '@ts-rest/core';
import { type AppRouteImplementation, createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type RequestHandler } from 'express';
import { z } from 'zod';

const c = initContract();

const ApiError = z.object({ error: z.number(), message: z.string() });
export const Plant = z.object({ name: z.string().min(1).max(200), tag: z.string().min(1).max(100).optional() });
export type Plant = z.infer<typeof Plant>;

const contract = c.router({
  createPlant: {
    method: 'POST',
    path: '/plants',
    body: Plant.extend({ id: z.number().int() }),
    responses: { 200: Plant, 401: ApiError, 409: ApiError },
  },
});

const expected = `Bearer ${process.env.BENCH_TOKEN}`;

const bearer: RequestHandler = (req, res, next) => {
  if (req.headers.authorization === expected) return next();
  res.status(401).json({ error: 401, message: 'Unauthorized.' });
};

/** The peer's app, storing as `createPlant` does. */
export const peerApp = (createPlant: AppRouteImplementation<typeof contract.createPlant>): express.Express => {
  const app = express();
  app.use(express.json());
  createExpressEndpoints(contract, initServer().router(contract, { createPlant }), app, {
    globalMiddleware: [bearer],
  });
  return app;
};
