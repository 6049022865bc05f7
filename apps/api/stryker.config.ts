import { strykerOptions } from '../../scripts/stryker-options.ts';

// The service's pure modules: what they answer follows from their input alone.
export default strykerOptions([
  'src/config.ts',
  'src/auth/rate-limiter.ts',
  'src/http/error-handler.ts',
  'src/http/json-body.ts',
  'src/webhooks/secrets/signature.ts',
  'src/webhooks/targets/target-address.ts',
]);
