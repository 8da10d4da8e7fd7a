// An SVG bar chart of the benchmark: requests per second of each target for the main scenarios.

const SCENARIOS = ['GET one user (shape B)', 'GET one user', 'POST a user (shape B)'];
const COLOURS = { 'GET one user': '#4c78a8', 'GET one user (shape B)': '#4c78a8', 'POST a user (shape B)': '#f58518' };
const escapeXml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Bars of req/s at 12 users: GET one user and POST a user, per target. */
export function renderChart(results) {
  const rows = results.filter((r) => r.users === 12 && SCENARIOS.includes(r.scenario));
  const max = Math.max(...rows.map((r) => r.rps), 1);
  const barHeight = 22;
  const left = 360;
  const width = 900;
  const height = 60 + rows.length * (barHeight + 6);
  const bars = rows.map((r, i) => {
    const y = 40 + i * (barHeight + 6);
    const w = ((width - left - 90) * r.rps) / max;
    const label = `${r.target}: ${r.scenario.replace(' (shape B)', '')}`;
    return [
      `<text x="${left - 8}" y="${y + 15}" text-anchor="end" font-size="12">${escapeXml(label)}</text>`,
      `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barHeight}" fill="${COLOURS[r.scenario]}"/>`,
      `<text x="${(left + w + 6).toFixed(1)}" y="${y + 15}" font-size="12">${Math.round(r.rps).toLocaleString('en')} req/s</text>`,
    ].join('');
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">Requests per second at 12 users (wrk, 50 connections, loopback; blue GET, orange POST)</text>
${bars.join('\n')}
</svg>
`;
}
