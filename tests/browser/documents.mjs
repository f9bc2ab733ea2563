// Drives headless Chromium (as report.mjs does) over the HTML report of two
// versions of a .docx: expand the cluster, open the pair's side-by-side
// view, and check that both panes show the documents' text (the view that
// was compared, `docx text`), not the XML of the package nor the zip's
// bytes. Run by tests/heavy/html_browser.rs:
//
//   node tests/browser/documents.mjs REPORT.html OUTDIR SENTENCE
//
// SENTENCE is a line of the first document's text. Exits 0 when every
// check passed, 1 otherwise; the screenshot goes to OUTDIR.
import { chromium } from 'playwright-core';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [report, outdir, sentence] = process.argv.slice(2);
if (!report || !outdir || !sentence) {
  console.error('usage: node documents.mjs REPORT.html OUTDIR SENTENCE');
  process.exit(2);
}
const url = pathToFileURL(path.resolve(report)).href;
let checks = 0;
function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
  checks++;
  console.log('ok - ' + what);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const requests = [], errors = [];
  page.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);

  const rows = page.locator('#cbody tr.cluster');
  check(await rows.count() === 1, 'one cluster: the two versions');
  await rows.first().click();
  const detail = page.locator('#cbody tr.detail');
  check(await detail.isVisible(), 'cluster expands');
  await detail.locator('button.view').first().click();
  const viewer = page.locator('#viewer');
  check(await viewer.isVisible(), 'side-by-side view opens');
  const title = await page.textContent('#vtitle');
  check(title === 'Side-by-side view: docx text \u2194 docx text', `the title names both views (${title})`);
  for (const id of ['#pane-a', '#pane-b']) {
    const name = await page.textContent(`${id} .pname`);
    check(/letter-v[12]\.docx$/.test(name), `${id} is a version of the letter (${name})`);
    const meta = await page.textContent(`${id} .pmeta`);
    check(meta.includes('docx text'), `${id} names its view: docx text (${meta})`);
    const text = await page.locator(`${id} pre`).textContent();
    check(text.includes(sentence), `${id} shows the document's sentence`);
    for (const bytes of ['<w:', 'word/document.xml', '[Content_Types]', 'PK\u0003\u0004', 'xmlns']) {
      check(!text.includes(bytes), `${id} shows no ${JSON.stringify(bytes)} (XML or zip bytes)`);
    }
    const shared = await page.locator(`${id} pre span.sh`).count();
    check(shared > 0, `${id}: ${shared} chunks of text shared with the other version`);
  }
  await page.screenshot({ path: path.join(outdir, 'report-docx-view.png') });
  check(errors.length === 0, 'no page errors' + (errors.length ? ': ' + errors.join('; ') : ''));
  check(requests.length === 0, 'no network requests' + (requests.length ? ': ' + requests.join(' ') : ''));
  console.log(`${checks} checks passed`);
} catch (e) {
  console.log('not ok - ' + e.message);
  failed = true;
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
