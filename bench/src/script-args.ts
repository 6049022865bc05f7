import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

/**
 * A script's command line: each string option with its default, each flag false unless given.
 * Unknown options are refused, as `parseArgs` does by default.
 */
export const parseScriptArgs = <S extends string, F extends string = never>(
  strings: Record<S, string>,
  flags: readonly F[] = [],
): Record<S, string> & Record<F, boolean> => {
  const options: ParseArgsOptionsConfig = {};
  for (const [name, value] of Object.entries<string>(strings)) options[name] = { type: 'string', default: value };
  for (const flag of flags) options[flag] = { type: 'boolean', default: false };
  return parseArgs({ options }).values as Record<S, string> & Record<F, boolean>;
};

/** A comma-separated list of numbers, as `--workers 1,2` gives it. */
export const numberList = (text: string): number[] => text.split(',').map(Number);
