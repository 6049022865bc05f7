import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg, release, totalmem } from 'node:os';

export type Machine = {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  kernel: string;
  /** 1-minute load average when the run started: other work on a shared machine skews the figures. */
  loadAverage: number;
};

const cpuModel = (): string => {
  try {
    const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
    return /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
};

export const describeMachine = (): Machine => ({
  nproc: availableParallelism(),
  cpuModel: cpuModel(),
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  kernel: `${process.platform} ${release()}`,
  loadAverage: Math.round((loadavg()[0] ?? 0) * 100) / 100,
});

export const machineLine = (m: Machine): string =>
  `${m.nproc} cores (${m.cpuModel}), ${m.memoryGiB} GiB, Node ${m.node}, ${m.kernel}`;
