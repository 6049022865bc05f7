import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesHistogram } from './series-histogram.ts';

const options = {
  name: 'work_seconds',
  help: 'Time spent working.',
  labelNames: ['method', 'status'] as const,
  buckets: [0.001, 0.01, 0.1, 1],
};

/** The same observations in a SeriesHistogram and in prom-client's Histogram, each in a registry of its own. */
const both = (observations: [method: string, status: string, seconds: number][]) => {
  const ours = new Registry();
  const theirs = new Registry();
  const histogram = new SeriesHistogram({ ...options, registers: [ours] });
  const reference = new Histogram({ ...options, registers: [theirs] });
  for (const [method, status, seconds] of observations) {
    histogram.series(method, status).observe(seconds);
    reference.observe({ method, status }, seconds);
  }
  return { ours, theirs, histogram };
};

const observations: [string, string, number][] = [
  ['GET', '200', 0.0005],
  ['GET', '200', 0.001], // on a bound: that bucket's
  ['GET', '200', 0.05],
  ['POST', '200', 3], // above every bound: +Inf only
  ['GET', '404', 0.02],
  ['POST', '200', 0.1],
  ['GET', '200', 0.5],
];

describe('SeriesHistogram', () => {
  it('is written exactly as prom-client writes a histogram of the same observations', async () => {
    const { ours, theirs } = both(observations);
    const text = await ours.metrics();
    expect(text).toBe(await theirs.metrics());
    expect(text).toContain('work_seconds_bucket{le="0.001",method="GET",status="200"} 2');
    expect(text).toContain('work_seconds_bucket{le="1",method="POST",status="200"} 1');
    expect(text).toContain('work_seconds_bucket{le="+Inf",method="POST",status="200"} 2');
    expect(text).toContain('work_seconds_sum{method="POST",status="200"} 3.1');
    expect(text).toContain('work_seconds_count{method="GET",status="404"} 1');
  });

  it('gives the registry the same JSON as prom-client', async () => {
    const { ours, theirs } = both(observations);
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('keeps one series per set of label values, and counts each', () => {
    const { histogram } = both(observations);
    expect(histogram.series('GET', '200')).toBe(histogram.series('GET', '200'));
    expect(histogram.counts()).toEqual([
      { labels: { method: 'GET', status: '200' }, count: 4 },
      { labels: { method: 'POST', status: '200' }, count: 2 },
      { labels: { method: 'GET', status: '404' }, count: 1 },
    ]);
  });

  it('tells a series apart by every label, not by the values joined', () => {
    const { histogram } = both([
      ['a', 'b c', 1],
      ['a b', 'c', 1],
    ]);
    expect(histogram.counts()).toHaveLength(2);
  });

  it('refuses a series with the wrong number of label values, whatever series exist', () => {
    const { histogram } = both(observations);
    expect(() => histogram.series('GET')).toThrow(/takes 2 label values, got 1/);
    expect(() => histogram.series('GET', '200', 'extra')).toThrow(/takes 2 label values, got 3/);
  });

  it('writes no series after the registry resets its metrics, until a series kept is observed again', async () => {
    const { ours, histogram } = both(observations);
    const kept = histogram.series('GET', '404');
    ours.resetMetrics();
    expect(histogram.counts()).toEqual([]);
    expect(await ours.metrics()).toBe('# HELP work_seconds Time spent working.\n# TYPE work_seconds histogram\n');
    kept.observe(0.02);
    expect(histogram.counts()).toEqual([{ labels: { method: 'GET', status: '404' }, count: 1 }]);
    expect(await ours.metrics()).toContain('work_seconds_bucket{le="0.01",method="GET",status="404"} 0');
    expect(await ours.metrics()).toContain('work_seconds_bucket{le="0.1",method="GET",status="404"} 1');
  });
});
