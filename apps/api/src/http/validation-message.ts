import type { ZodError } from 'zod';

const MAX_LISTED_ISSUES = 5;

/**
 * One sentence naming each invalid field, e.g. `Invalid request body: id must be an integer …; name is required.`
 * The contract's schemas word their messages to follow the field name.
 */
export const validationMessage = (where: string, error: ZodError): string => {
  const issues = error.issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    const field = issue.path.length === 0 ? 'the top-level value' : issue.path.join('.');
    return `${field} ${issue.message}`;
  });
  const more = error.issues.length - issues.length;
  return `Invalid ${where}: ${issues.join('; ')}${more > 0 ? `; and ${more} more` : ''}.`;
};
