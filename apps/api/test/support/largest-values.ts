import { NAME_MAX_LENGTH, TAG_MAX_LENGTH, WEBHOOK_DESCRIPTION_MAX_LENGTH } from '@org/plant-contract';

// The heaviest values the contract allows: every character takes four bytes in UTF-8.

/** The longest name, 800 bytes of UTF-8. */
export const LARGEST_NAME = '🌿'.repeat(NAME_MAX_LENGTH);
/** The longest tag. */
export const LARGEST_TAG = '🌵'.repeat(TAG_MAX_LENGTH);
/** The longest webhook endpoint description. */
export const LARGEST_DESCRIPTION = '🌵'.repeat(WEBHOOK_DESCRIPTION_MAX_LENGTH);
