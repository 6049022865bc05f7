import { relative } from 'node:path';

/** The parts of a V8 .cpuprofile (as written by `node --cpu-prof`) used here. */
export type CpuProfile = {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
};

export type Cost = { name: string; ms: number; share: number };

export type ProfileSummary = {
  sampledMs: number;
  idleMs: number;
  busyMs: number;
  /** Time with the function itself on top of the stack, grouped by package or file. */
  selfByGroup: Cost[];
  /** Time with the group anywhere on the stack (each sample counted once per group). */
  totalByGroup: Cost[];
  selfByFunction: Cost[];
  totalByFunction: Cost[];
};

const META = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);

/** Which package, Node module or source file a frame belongs to. */
export const groupOf = (url: string, functionName: string, root: string): string => {
  if (META.has(functionName)) return functionName;
  if (url === '') return '(native)';
  if (url.startsWith('wasm:')) return '(wasm)';
  const packages = [...url.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
  const last = packages.at(-1)?.[1];
  if (last !== undefined && !last.startsWith('.')) return last;
  if (url.startsWith('node:')) {
    const path = url.slice('node:'.length).replace(/^internal\//, '');
    return `node:${path.split('/').slice(0, 2).join('/')}`;
  }
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  return relative(root, path);
};

const frameName = (frame: CpuProfile['nodes'][number]['callFrame'], root: string): string => {
  const where = groupOf(frame.url, frame.functionName, root);
  const name = frame.functionName || '(anonymous)';
  return META.has(name) ? name : `${name} ${where}:${frame.lineNumber + 1}`;
};

const ranked = (costs: Map<string, number>, busyMs: number, top: number): Cost[] =>
  [...costs]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, ms, share: ms / busyMs }));

/** Self and total time by group and by function; shares are of busy (non-idle) time. */
export const summarizeProfile = (profile: CpuProfile, root: string, top = 25): ProfileSummary => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const selfGroup = new Map<string, number>();
  const totalGroup = new Map<string, number>();
  const selfFunction = new Map<string, number>();
  const totalFunction = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);

  let sampledMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, index) => {
    // timeDeltas[i] is the time since the previous sample: the next delta is how long this one lasted.
    const ms = (profile.timeDeltas[index + 1] ?? profile.timeDeltas[index] ?? 0) / 1000;
    sampledMs += ms;
    const leaf = byId.get(id);
    if (!leaf) return;
    if (leaf.callFrame.functionName === '(idle)') {
      idleMs += ms;
      return;
    }
    add(selfGroup, groupOf(leaf.callFrame.url, leaf.callFrame.functionName, root), ms);
    add(selfFunction, frameName(leaf.callFrame, root), ms);
    const groups = new Set<string>();
    const functions = new Set<string>();
    for (let node: typeof leaf | undefined = leaf; node; node = byId.get(parent.get(node.id) ?? -1)) {
      if (node.callFrame.functionName === '(root)') break;
      groups.add(groupOf(node.callFrame.url, node.callFrame.functionName, root));
      functions.add(frameName(node.callFrame, root));
    }
    for (const group of groups) add(totalGroup, group, ms);
    for (const name of functions) add(totalFunction, name, ms);
  });
  const busyMs = sampledMs - idleMs;
  return {
    sampledMs,
    idleMs,
    busyMs,
    selfByGroup: ranked(selfGroup, busyMs, top),
    totalByGroup: ranked(totalGroup, busyMs, top),
    selfByFunction: ranked(selfFunction, busyMs, top),
    totalByFunction: ranked(totalFunction, busyMs, top),
  };
};

export const formatSummary = (summary: ProfileSummary): string => {
  const section = (title: string, costs: Cost[]) => [
    '',
    title,
    ...costs.map(
      (cost) => `  ${(cost.share * 100).toFixed(1).padStart(5)}%  ${cost.ms.toFixed(0).padStart(6)} ms  ${cost.name}`,
    ),
  ];
  return [
    `sampled ${summary.sampledMs.toFixed(0)} ms: busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms (shares below are of busy time)`,
    ...section('self time by package / file:', summary.selfByGroup),
    ...section('total time by package / file (anywhere on the stack):', summary.totalByGroup),
    ...section('self time by function:', summary.selfByFunction),
    ...section('total time by function:', summary.totalByFunction),
  ].join('\n');
};
