// Drives the stepping page's own script (view/html.rs, STEPPER) under Node
// with the few DOM calls it makes stubbed, for tests/view.rs: steps to the
// first event whose words match a pattern, prints what the panes show, then
// steps back once. Usage: node step.js PAGE.html PATTERN
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const pattern = new RegExp(process.argv[3]);
const data = html.match(/<script type="application\/json" id="steps">([\s\S]*?)<\/script>/)[1];
const code = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(m => m[1]).find(c => c.includes('const PANES='));
const els = {};
function el(id) {
  if (!els[id]) {
    els[id] = { id, textContent: '', innerHTML: '', value: '', max: 0, tagName: 'DIV', scrollIntoView() {},
      classList: { s: new Set(), add(c) { this.s.add(c); }, remove(c) { this.s.delete(c); } } };
  }
  return els[id];
}
el('steps').textContent = data;
el('speed').value = '400';
const listeners = {};
global.document = { getElementById: el, addEventListener: (t, f) => { listeners[t] = f; } };
eval(code);
const key = k => listeners.keydown({ key: k, target: { tagName: 'BODY' }, preventDefault() {} });
const S = JSON.parse(data);
const at = S.events.findIndex(e => pattern.test(e.text));
if (at < 0) { console.log('NO EVENT'); process.exit(1); }
key('Home');
for (let i = 0; i < at; i++) key('ArrowRight');
const flat = s => s.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
console.log('WHERE ' + els.where.textContent);
console.log('SAID ' + els.said.textContent);
console.log('WORLD ' + flat(els.world.innerHTML));
console.log('CARDS ' + flat(els.cards.innerHTML));
console.log('HIGHLIGHTED ' + els['ev' + at].classList.s.has('now'));
if (at > 0) {
  key('ArrowLeft');
  console.log('BACK ' + els.where.textContent + ' ' + els['ev' + (at - 1)].classList.s.has('now') + ' ' + !els['ev' + at].classList.s.has('now'));
}
