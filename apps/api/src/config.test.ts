import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      apiTokens: [],
      dataDir: './data',
      logLevel: 'info',
    });
  });

  it('reads every variable, splitting and trimming the token list', () => {
    const config = loadConfig({
      PORT: '4000',
      HOST: '0.0.0.0',
      PLANT_API_TOKENS: ' first-token-0123456789 , second-token-0123456789,',
      PLANT_DATA_DIR: '/var/lib/plants',
      LOG_LEVEL: 'warn',
    });
    expect(config).toEqual({
      port: 4000,
      host: '0.0.0.0',
      apiTokens: ['first-token-0123456789', 'second-token-0123456789'],
      dataDir: '/var/lib/plants',
      logLevel: 'warn',
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '' })).toMatchObject({ port: 3000, logLevel: 'info' });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [{ PORT: '70000' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [
      { LOG_LEVEL: 'loud' },
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent.',
    ],
    [
      { PLANT_API_TOKENS: 'short' },
      /^Invalid configuration: PLANT_API_TOKENS must be a comma-separated list of tokens/,
    ],
    [{ PLANT_API_TOKENS: 'has a space in it, really long' }, /^Invalid configuration: PLANT_API_TOKENS /],
  ])('rejects %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never echoes a rejected token', () => {
    expect(() => loadConfig({ PLANT_API_TOKENS: 'secret value' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });
});
