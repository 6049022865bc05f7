import type { ClientInferRequest, ClientInferResponseBody, ServerInferResponses } from '@ts-rest/core';
import { expectTypeOf } from 'vitest';
import type { contract, RouteMetadata } from './contract.ts';
import type { ApiError, NewPlant, Plant } from './schemas.ts';

type CreatePlant = typeof contract.createPlant;

// zod 3 infers optional fields as `?: T | undefined`; under exactOptionalPropertyTypes that is the exact type.
expectTypeOf<NewPlant>().toEqualTypeOf<{ id: number | bigint; name: string; tag?: string | undefined }>();
expectTypeOf<Plant>().toEqualTypeOf<{ name: string; tag?: string | undefined }>();
expectTypeOf<ApiError>().toEqualTypeOf<{ error: number; message: string }>();

// The request body of createPlant is NewPlant.
expectTypeOf<ClientInferRequest<CreatePlant>['body']>().toEqualTypeOf<NewPlant>();
// A number id with a tag and a bigint id past 2^53 are both NewPlants (each line fails if not).
const withTag: NewPlant = { id: 1, name: 'Fern', tag: 'fern' };
const bigId: NewPlant = { id: 9007199254740993n, name: 'Fern' };
// @ts-expect-error name is required
const noName: NewPlant = { id: 1 };
// @ts-expect-error the id is an integer, not a string
const stringId: NewPlant = { id: '1', name: 'Fern' };
// @ts-expect-error tag is a string or absent, never null
const nullTag: NewPlant = { id: 1, name: 'Fern', tag: null };
void [withTag, bigId, noName, stringId, nullTag];

// The statuses the server may answer, and the body of each.
type Responses = ServerInferResponses<CreatePlant>;
expectTypeOf<Responses['status']>().toEqualTypeOf<
  200 | 400 | 401 | 403 | 404 | 408 | 409 | 413 | 415 | 429 | 431 | 500 | 503
>();
expectTypeOf<Extract<Responses, { status: 200 }>['body']>().toEqualTypeOf<Plant>();
expectTypeOf<Extract<Responses, { status: Exclude<Responses['status'], 200> }>['body']>().toEqualTypeOf<ApiError>();
expectTypeOf<ClientInferResponseBody<CreatePlant, 200>>().toEqualTypeOf<Plant>();
expectTypeOf<ClientInferResponseBody<CreatePlant, 409>>().toEqualTypeOf<ApiError>();

const created: Responses = { status: 200, body: { name: 'Fern' } };
const conflict: Responses = { status: 409, body: { error: 409, message: 'taken' } };
// @ts-expect-error 418 is not a status of the contract
const teapot: Responses = { status: 418, body: { error: 418, message: 'teapot' } };
// @ts-expect-error a failure answers ApiError, not a Plant
const plantOnError: Responses = { status: 400, body: { name: 'Fern' } };
// @ts-expect-error a success answers a Plant, not ApiError
const errorOnSuccess: Responses = { status: 200, body: { error: 200, message: 'ok' } };
void [created, conflict, teapot, plantOnError, errorOnSuccess];

// Every route declares the scope it needs (the service reads it from req.tsRestRoute.metadata).
type Metadata = {
  [Name in keyof typeof contract]: (typeof contract)[Name] extends { metadata: infer Declared } ? Declared : never;
};
expectTypeOf<Metadata[keyof Metadata]>().toExtend<RouteMetadata>();
expectTypeOf<CreatePlant['metadata']['scope']>().toEqualTypeOf<'plants:write'>();
