import { readFileSync, writeFileSync } from 'node:fs';
import type { ClientBenchResult } from './client-overhead.ts';
import { type Machine, machineLine } from './machine.ts';
import type { ServerKey } from './options.ts';
import { type Bar, renderChart } from './svg-chart.ts';
import type { WrkResult } from './wrk.ts';

export type RoundResult = WrkResult & {
  round: number;
  reqPerSec: number;
  /** With a webhook subscriber: deliveries made while the round's load ran ÷ its creates. */
  deliveredShare?: number;
  /** With a webhook subscriber: deliveries per second while the backlog drained after the round. */
  drainPerSec?: number;
};

export type ServerResult = {
  key: ServerKey;
  name: string;
  rounds: RoundResult[];
  /** Medians over the rounds. */
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** VmHWM of the server process over warm-up and every round. */
  peakRssMiB: number;
  coldStartMs: number;
  coldStartSamplesMs: number[];
  /** Medians of the per-round ratios (each round's neighbours in time), when the reference ran. */
  ratioToA?: number;
  ratioToB?: number;
  /** For (e) and (d): against (c), the same API on the embedded store without a webhook subscriber. */
  ratioToC?: number;
  /** For (d): against (g), the untuned peer on the same PostgreSQL. */
  ratioToG?: number;
  /** With a webhook subscriber ((e)): the median of the rounds' shares delivered during the load. */
  deliveredShare?: number;
  /** 200 answers counted by wrk (rounds and warm-up) and plants found stored afterwards. */
  answered: number;
  storedPlants?: number;
};

export type ClientResult = ClientBenchResult & { server: ServerKey };

export type TargetCheck = { what: string; target: string; measured: string; met: boolean };

export type Report = {
  generatedAt: string;
  mode: 'full' | 'smoke';
  machine: Machine;
  commit: string | undefined;
  settings: {
    rounds: number;
    secondsPerRound: number;
    warmupSeconds: number;
    connections: number;
    wrkThreads: number;
    coldStarts: number;
    loadGenerator: string;
  };
  servers: ServerResult[];
  skipped: { key: ServerKey; name: string; reason: string }[];
  targets: TargetCheck[];
  client: ClientResult[];
};

const fixed = (value: number | undefined, digits: number): string =>
  value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);

const times = (value: number | undefined): string => (value === undefined ? '–' : `${value.toFixed(2)}×`);

/** A webhook subscriber's share of a round's creates delivered while its load ran, in words. */
export const deliveredDuringLoad = (share: number): string => `${fixed(share * 100, 0)}% delivered during the load`;

/** Our API on the embedded store against the Express peer (issue 12: on Express itself). */
const C_VS_PEER_TARGET = 1.2;

/** A ratio that must reach `target`. */
const ratioAtLeast = (what: string, ratio: number, target: number): TargetCheck => ({
  what,
  target: `≥ ${target.toFixed(2)}×`,
  measured: times(ratio),
  met: ratio >= target,
});

/** A figure in `unit` that must stay within `limit`, shown with `digits` decimals. */
const atMost = (what: string, value: number, limit: number, unit: string, digits: number): TargetCheck => ({
  what,
  target: `≤ ${limit} ${unit}`,
  measured: `${fixed(value, digits)} ${unit}`,
  met: value <= limit,
});

export const checkTargets = (servers: ServerResult[], client: ClientResult[]): TargetCheck[] => {
  const checks: TargetCheck[] = [];
  const c = servers.find((server) => server.key === 'c');
  const d = servers.find((server) => server.key === 'd');
  const e = servers.find((server) => server.key === 'e');
  if (c?.ratioToB !== undefined) checks.push(ratioAtLeast('(c) throughput vs peer (b)', c.ratioToB, C_VS_PEER_TARGET));
  if (c) {
    checks.push(
      atMost('(c) p99 latency', c.p99Ms, 10, 'ms', 2),
      atMost('(c) peak RSS', c.peakRssMiB, 120, 'MiB', 0),
      atMost('(c) cold start', c.coldStartMs, 300, 'ms', 0),
    );
  }
  if (d?.ratioToB !== undefined) checks.push(ratioAtLeast('(d) throughput vs peer (b)', d.ratioToB, 1));
  // Our API on PostgreSQL against our embedded store: issue 20 asked 0.9×, issue 48 0.8× once the
  // embedded store had become faster (its CPU arithmetic is in README.md).
  if (d?.ratioToC !== undefined) checks.push(ratioAtLeast('(d) throughput vs our embedded store (c)', d.ratioToC, 0.8));
  // Issue 20 asks (d) to be "well above" the untuned PostgreSQL peer (g); 1.5× is what we hold it to.
  if (d?.ratioToG !== undefined) checks.push(ratioAtLeast('(d) throughput vs PostgreSQL peer (g)', d.ratioToG, 1.5));
  if (d) {
    checks.push(
      atMost('(d) p99 latency', d.p99Ms, 15, 'ms', 2),
      atMost('(d) cold start on PostgreSQL', d.coldStartMs, 300, 'ms', 0),
    );
    if (c) {
      checks.push({
        what: '(d) peak RSS vs (c)',
        target: `≤ ${fixed(c.peakRssMiB, 0)} MiB`,
        measured: `${fixed(d.peakRssMiB, 0)} MiB`,
        met: d.peakRssMiB <= c.peakRssMiB,
      });
    }
  }
  if (c && e) {
    // Announcing every plant to a subscribed receiver, deliveries paid as they come (issue 48):
    // creates at 0.6× (c)'s rate or more while at least a quarter of them reach the receiver
    // during the load, not after it.
    const withWebhook = e.ratioToC ?? e.reqPerSec / c.reqPerSec;
    checks.push(ratioAtLeast('(e) throughput with one webhook subscriber vs (c)', withWebhook, 0.6));
    if (e.deliveredShare !== undefined) {
      checks.push({
        what: '(e) share of creates delivered during the load',
        target: '≥ 25%',
        measured: `${(e.deliveredShare * 100).toFixed(0)}%`,
        met: e.deliveredShare >= 0.25,
      });
    }
  }
  // `createPlant` through the client against a hand-written fetch: issue 13 holds the client to 1.1×
  // at 1 in flight; 10 in flight is reported beside it.
  for (const result of client.filter(({ concurrency }) => concurrency === 1)) {
    checks.push({
      what: `client vs fetch on (${result.server}), ${result.concurrency} in flight`,
      target: '≤ 1.10×',
      measured: times(result.ratio),
      met: result.ratio <= 1.1,
    });
  }
  return checks;
};

const pad = (cells: string[], widths: number[]): string =>
  cells
    .map((cell, index) => (index === 0 ? cell.padEnd(widths[index] ?? 0) : cell.padStart(widths[index] ?? 0)))
    .join('  ');

const HEADER = ['server', 'req/s', '×(a)', '×(b)', 'p50 ms', 'p99 ms', 'peak RSS MiB', 'cold start ms'];

const rows = (report: Report): string[][] =>
  report.servers.map((server) => [
    `(${server.key}) ${server.name}`,
    fixed(server.reqPerSec, 0),
    times(server.ratioToA),
    times(server.ratioToB),
    fixed(server.p50Ms, 2),
    fixed(server.p99Ms, 2),
    fixed(server.peakRssMiB, 0),
    fixed(server.coldStartMs, 0),
  ]);

/** The figures as a console table, then the targets and the client overhead. */
export const formatTable = (report: Report): string => {
  const table = [HEADER, ...rows(report)];
  const widths = HEADER.map((_, column) => Math.max(...table.map((row) => row[column]?.length ?? 0)));
  const lines = table.map((row) => pad(row, widths));
  lines.splice(1, 0, widths.map((width) => '-'.repeat(width)).join('  '));
  for (const skipped of report.skipped) lines.push(`(${skipped.key}) ${skipped.name}: skipped, ${skipped.reason}`);
  for (const server of report.servers) {
    const perRound = server.rounds
      .map((r) =>
        r.deliveredShare === undefined
          ? fixed(r.reqPerSec, 0)
          : `${fixed(r.reqPerSec, 0)} (${deliveredDuringLoad(r.deliveredShare)}, then ${fixed(r.drainPerSec, 0)}/s)`,
      )
      .join(', ');
    lines.push(
      `(${server.key}) req/s per round: ${perRound}; cold starts ms: ${server.coldStartSamplesMs.map((ms) => ms.toFixed(0)).join(', ')}`,
    );
  }
  if (report.client.length > 0) {
    lines.push('', 'client overhead (createPlant via @org/plant-client vs hand-written fetch, median µs per request):');
    for (const c of report.client) {
      lines.push(
        `  on (${c.server}), ${c.concurrency} in flight: client ${fixed(c.clientUs, 0)} µs, fetch ${fixed(c.fetchUs, 0)} µs → ${times(c.ratio)}`,
      );
    }
  }
  if (report.targets.length > 0) {
    lines.push('', 'targets:');
    for (const t of report.targets)
      lines.push(`  ${t.met ? 'met   ' : 'MISSED'} ${t.what}: ${t.measured} (target ${t.target})`);
  }
  return lines.join('\n');
};

const settingsLine = (report: Report): string => {
  const s = report.settings;
  return `${s.rounds} rounds × ${s.secondsPerRound} s per server (alternating ${report.servers.map((server) => server.key).join(' ')}), ${s.warmupSeconds} s warm-up, ${s.connections} connections, ${s.loadGenerator} on the same machine`;
};

/** A Markdown table padded the way the repository's formatter (biome) writes it. */
const markdownTable = (header: string[], body: string[][], right: (column: number) => boolean): string[] => {
  const widths = header.map((_, column) => Math.max(3, ...[header, ...body].map((row) => row[column]?.length ?? 0)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => (right(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0))).join(' | ')} |`;
  const rule = widths.map((width, column) => (right(column) ? `${'-'.repeat(width - 1)}:` : '-'.repeat(width)));
  return [line(header), `| ${rule.join(' | ')} |`, ...body.map(line)];
};

/** bench/README.md's figures, between the bench markers. */
export const formatMarkdown = (report: Report): string => {
  const lines = [
    `Measured ${report.generatedAt.slice(0, 10)}${report.commit ? ` with HEAD at ${report.commit}` : ''} on ${machineLine(report.machine)} (load average ${report.machine.loadAverage} at the start); ${settingsLine(report)}.`,
    '',
    ...markdownTable(HEADER, rows(report), (column) => column > 0),
  ];
  for (const skipped of report.skipped)
    lines.push('', `(${skipped.key}) ${skipped.name} was skipped: ${skipped.reason}.`);
  if (report.client.length > 0) {
    lines.push('', 'Client overhead, `createPlant` through `@org/plant-client` against a hand-written `fetch`:', '');
    for (const c of report.client) {
      lines.push(
        `- on (${c.server}), ${c.concurrency} in flight: ${fixed(c.clientUs, 0)} µs vs ${fixed(c.fetchUs, 0)} µs per request, ${times(c.ratio)}`,
      );
    }
  }
  const targets = report.targets.map((t) => [t.what, t.target, t.measured, t.met ? 'met' : '**missed**']);
  lines.push('', ...markdownTable(['target', 'goal', 'measured', ''], targets, () => false));
  lines.push('', '![Benchmark chart](results/latest.svg)');
  return lines.join('\n');
};

const COLORS: Record<ServerKey, string> = {
  a: '#95a5a6',
  b: '#5d6d7e',
  c: '#27ae60',
  d: '#2e86c1',
  e: '#8e44ad',
  g: '#aab7b8',
};

export const renderReportChart = (report: Report): string => {
  const bars = (value: (server: ServerResult) => number, text: (server: ServerResult) => string): Bar[] =>
    report.servers.map((server) => ({
      label: `(${server.key}) ${server.name}`,
      value: value(server),
      text: text(server),
      color: COLORS[server.key],
    }));
  const peer = report.servers.find((server) => server.key === 'b');
  return renderChart(
    'Plant Store: POST /plants',
    `${machineLine(report.machine)} · ${report.generatedAt.slice(0, 10)}`,
    [
      {
        title: 'Throughput, req/s (higher is better)',
        bars: bars(
          (s) => s.reqPerSec,
          (s) => `${fixed(s.reqPerSec, 0)}${s.ratioToB === undefined ? '' : `  (${times(s.ratioToB)} peer)`}`,
        ),
        ...(peer && {
          target: { value: peer.reqPerSec * C_VS_PEER_TARGET, label: `target for (c): ${C_VS_PEER_TARGET}× peer` },
        }),
      },
      {
        title: 'p99 latency at 50 connections, ms (lower is better)',
        bars: bars(
          (s) => s.p99Ms,
          (s) => `${fixed(s.p99Ms, 2)} ms (p50 ${fixed(s.p50Ms, 2)})`,
        ),
        target: { value: 10, label: 'target for (c): 10 ms' },
      },
      {
        title: 'Peak RSS, MiB (lower is better)',
        bars: bars(
          (s) => s.peakRssMiB,
          (s) => `${fixed(s.peakRssMiB, 0)} MiB`,
        ),
        target: { value: 120, label: 'target for (c): 120 MiB' },
      },
      {
        title: 'Cold start to the first 200, ms (lower is better)',
        bars: bars(
          (s) => s.coldStartMs,
          (s) => `${fixed(s.coldStartMs, 0)} ms`,
        ),
        target: { value: 300, label: 'target for (c): 300 ms' },
      },
    ],
  );
};

const tidy = (value: number): number => (Number.isInteger(value) ? value : Math.round(value * 1000) / 1000);

/**
 * JSON as the repository's formatter (biome) keeps it: objects one key per line, arrays of plain
 * values on one line; numbers to 3 decimals.
 */
export const toJson = (value: unknown, indent = ''): string => {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((item) => item === null || typeof item !== 'object')) {
      return `[${value.map((item) => toJson(item)).join(', ')}]`;
    }
    return `[\n${value.map((item) => inner + toJson(item, inner)).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${toJson(item, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(typeof value === 'number' ? tidy(value) : value);
};

const START = '<!-- bench:results:start -->';
const END = '<!-- bench:results:end -->';

/** Replaces the figures between the bench markers of the README; false when it has no markers. */
export const updateReadme = (file: string, report: Report): boolean => {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start === -1 || end < start) return false;
  writeFileSync(file, `${text.slice(0, start + START.length)}\n${formatMarkdown(report)}\n${text.slice(end)}`);
  return true;
};
