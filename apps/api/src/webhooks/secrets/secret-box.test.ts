import { describe, expect, it } from 'vitest';
import { isSealed, keyIdOf, plainSecrets, SecretKeyError, sealedWith, secretBox } from './secret-box.ts';

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
const key = Buffer.alloc(32, 1);

describe('secretBox', () => {
  it('seals a secret so that it is unreadable, different every time, and opens it again', () => {
    const box = secretBox(key);
    const sealed = box.seal('ep_1', SECRET);
    expect(sealed).toMatch(/^whenc_v1\.[0-9a-f]{16}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(SECRET.slice(6));
    expect(isSealed(sealed)).toBe(true);
    expect(sealedWith(sealed)).toBe(keyIdOf(key));
    expect(box.seal('ep_1', SECRET)).not.toBe(sealed);
    expect(box.open('ep_1', sealed)).toBe(SECRET);
  });

  it('opens a plain secret as it is (not sealed yet)', () => {
    expect(secretBox(key).open('ep_1', SECRET)).toBe(SECRET);
    expect(isSealed(SECRET)).toBe(false);
  });

  it("refuses another key's sealed secret, naming both key ids", () => {
    const sealed = secretBox(key).seal('ep_1', SECRET);
    const other = secretBox(Buffer.alloc(32, 2));
    expect(() => other.open('ep_1', sealed)).toThrow(SecretKeyError);
    expect(() => other.open('ep_1', sealed)).toThrow(
      `(id ${keyIdOf(key)}) than PLANT_WEBHOOK_SECRETS_KEY (id ${other.keyId})`,
    );
  });

  it('refuses a sealed secret moved to another endpoint, or altered', () => {
    const box = secretBox(key);
    const sealed = box.seal('ep_1', SECRET);
    expect(() => box.open('ep_2', sealed)).toThrow(/authenticate/);
    const flipped = `${sealed.slice(0, -2)}${sealed.at(-2) === 'A' ? 'B' : 'A'}${sealed.at(-1)}`;
    expect(() => box.open('ep_1', flipped)).toThrow(/authenticate/);
  });

  it('needs a 32-byte key', () => {
    expect(() => secretBox(Buffer.alloc(16))).toThrow(SecretKeyError);
  });
});

describe('plainSecrets', () => {
  it('stores secrets as they are, and cannot open sealed ones', () => {
    expect(plainSecrets.seal('ep_1', SECRET)).toBe(SECRET);
    expect(plainSecrets.open('ep_1', SECRET)).toBe(SECRET);
    const sealed = secretBox(key).seal('ep_1', SECRET);
    expect(() => plainSecrets.open('ep_1', sealed)).toThrow(/set PLANT_WEBHOOK_SECRETS_KEY/);
  });
});
