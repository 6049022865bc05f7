import { expectTypeOf } from 'vitest';
import type { OpArgs, OpResult } from './protocol.ts';

// Argument counts are held to the argument lists: a count that disagrees does not typecheck.
const _counted = { code: 0, arity: 4 } as const satisfies { code: number; arity: OpArgs<'create'>['length'] };
// @ts-expect-error create takes 4 arguments, not 3
const _miscounted = { code: 0, arity: 3 } as const satisfies { code: number; arity: OpArgs<'create'>['length'] };

// The store submits and the thread answers with the types of the table.
expectTypeOf<OpArgs<'get'>>().toEqualTypeOf<[id: bigint]>();
expectTypeOf<OpResult<'deleteEndpoint'>>().toEqualTypeOf<boolean | null>();
expectTypeOf<OpResult<'fanOut'>>().toEqualTypeOf<bigint | null>();
