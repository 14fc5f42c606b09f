// The problems a config loader reported, for tests of config mistakes.
import { expect } from 'vitest';
import { ConfigError } from '../../config/load.ts';

/** The ConfigError's problems from `fn`; fails when it throws anything else or nothing. */
export function configProblems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
