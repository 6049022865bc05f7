import type { ZodError } from 'zod';

const MAX_LISTED_ISSUES = 5;

/**
 * One sentence naming each invalid field, e.g. `Invalid request body: id must be an integer …; name is required.`
 * The contract's schemas word their messages to follow the field name. The service and the
 * client's fake both answer with it.
 */
export const validationMessage = (where: string, error: ZodError): string => {
  // A value can break several checks with the same sentence (Infinity as an id): say it once.
  const all = [
    ...new Set(
      error.issues.map((issue) => {
        const field = issue.path.length === 0 ? 'the top-level value' : issue.path.join('.');
        return `${field} ${issue.message}`;
      }),
    ),
  ];
  const issues = all.slice(0, MAX_LISTED_ISSUES);
  const more = all.length - issues.length;
  return `Invalid ${where}: ${issues.join('; ')}${more > 0 ? `; and ${more} more` : ''}.`;
};
