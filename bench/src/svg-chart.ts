/** A small hand-written horizontal bar chart: one panel per measure, one bar per server. */

export type Bar = { label: string; value: number; text: string; color: string };
export type Panel = { title: string; bars: Bar[]; target?: { value: number; label: string } };

const WIDTH = 800;
const LABEL_WIDTH = 250;
const BAR_AREA = 400;
const BAR_HEIGHT = 18;
const BAR_GAP = 6;
const PANEL_TITLE = 26;
const PANEL_GAP = 18;

const xml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const panelSvg = (panel: Panel, top: number): { svg: string; height: number } => {
  const values = panel.bars.map((bar) => bar.value).filter(Number.isFinite);
  const max = Math.max(...values, panel.target?.value ?? 0) * 1.05 || 1;
  const scale = (value: number) => (Number.isFinite(value) ? (value / max) * BAR_AREA : 0);
  const labels: string[] = [];
  const rects: string[] = [];
  const figures: string[] = [];
  panel.bars.forEach((bar, index) => {
    const y = top + PANEL_TITLE + index * (BAR_HEIGHT + BAR_GAP);
    const width = scale(bar.value);
    labels.push(`<text x="${LABEL_WIDTH - 8}" y="${y + 13}" text-anchor="end" font-size="12">${xml(bar.label)}</text>`);
    rects.push(
      `<rect x="${LABEL_WIDTH}" y="${y}" width="${width.toFixed(1)}" height="${BAR_HEIGHT}" fill="${bar.color}"/>`,
    );
    // A white halo keeps the figure readable where the target line crosses it.
    figures.push(
      `<text x="${(LABEL_WIDTH + width + 6).toFixed(1)}" y="${y + 13}" font-size="12" stroke="#fff" stroke-width="3" paint-order="stroke">${xml(bar.text)}</text>`,
    );
  });
  const barsHeight = panel.bars.length * (BAR_HEIGHT + BAR_GAP);
  const target: string[] = [];
  if (panel.target) {
    const x = (LABEL_WIDTH + scale(panel.target.value)).toFixed(1);
    const bottom = top + PANEL_TITLE + barsHeight;
    target.push(
      `<line x1="${x}" y1="${top + PANEL_TITLE - 4}" x2="${x}" y2="${bottom - BAR_GAP + 4}" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="4 3"/>`,
      `<text x="${x}" y="${bottom + 10}" text-anchor="middle" font-size="11" fill="#c0392b">${xml(panel.target.label)}</text>`,
    );
  }
  const parts = [
    `<text x="0" y="${top + 16}" font-weight="bold" font-size="14">${xml(panel.title)}</text>`,
    ...labels,
    ...rects,
    ...target,
    ...figures,
  ];
  return { svg: parts.join('\n'), height: PANEL_TITLE + barsHeight + (panel.target ? 12 : 0) };
};

export const renderChart = (title: string, subtitle: string, panels: Panel[]): string => {
  const body: string[] = [
    `<text x="0" y="18" font-weight="bold" font-size="16">${xml(title)}</text>`,
    `<text x="0" y="38" font-size="12" fill="#555">${xml(subtitle)}</text>`,
  ];
  let top = 54;
  for (const panel of panels) {
    const { svg, height } = panelSvg(panel, top);
    body.push(svg);
    top += height + PANEL_GAP;
  }
  const height = top;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH + 20}" height="${height + 10}" viewBox="-10 -5 ${WIDTH + 20} ${height + 10}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">`,
    `<title>${xml(`${title}, ${subtitle}`)}</title>`,
    `<rect x="-10" y="-5" width="${WIDTH + 20}" height="${height + 10}" fill="#fff"/>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
};
