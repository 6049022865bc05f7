import readChangesets from '@changesets/read';

/** The published packages whose breaking changes a major release announces, together (`fixed` in .changeset/config.json). */
export const PUBLISHED_PACKAGES = ['@org/plant-contract', '@org/plant-client'] as const;

/** Whether the pending changesets under `root`/.changeset bump every published package by major. */
export const majorReleasePending = async (root: string): Promise<boolean> => {
  const changesets = await readChangesets(root);
  const majors = new Set(
    changesets.flatMap(({ releases }) => releases.filter(({ type }) => type === 'major').map(({ name }) => name)),
  );
  return PUBLISHED_PACKAGES.every((name) => majors.has(name));
};
