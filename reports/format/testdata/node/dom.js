// Loads report.html in jsdom with its inline script running, and prints what the DOM holds.
const fs = require('fs');
const { JSDOM, VirtualConsole } = require('jsdom');
const errors = [];
const vc = new VirtualConsole();
vc.on('jsdomError', e => errors.push(String(e.message || e)));
const dom = new JSDOM(fs.readFileSync(process.argv[2], 'utf8'), { runScripts: 'dangerously', virtualConsole: vc });
const d = dom.window.document;
const q = s => d.querySelectorAll(s);
// Exercise the script: filter to one cell, then expand all evidence.
const filter = d.getElementById('filter');
filter.value = process.argv[3] || '';
filter.dispatchEvent(new dom.window.Event('input'));
d.getElementById('expand').click();
console.log(JSON.stringify({
  errors,
  cells: q('[data-testid=cell]').length,
  rows: q('[data-testid=cell-row]').length,
  heatCells: q('[data-testid=heat-cell]').length,
  whiskers: q('[data-testid=whisker]').length,
  hidden: q('section.cell.hidden').length,
  evidenceOpen: [...q('details[data-testid=evidence]')].filter(x => x.open).length,
  evidence: q('details[data-testid=evidence]').length,
  injected: q('pre script, section script').length,
  preText: [...q('pre')].map(p => p.textContent).join('\n'),
  external: [...q('[src],[href]')].map(e => e.getAttribute('src') || e.getAttribute('href')).filter(u => !u.startsWith('#')),
}));
