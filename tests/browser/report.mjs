// Drives a real headless Chromium (Debian's /usr/bin/chromium, through
// playwright-core, which downloads no browser) over an fsim HTML report:
// sort, filter, expand a cluster, open a side-by-side view, and check what is
// on screen. Run by tests/heavy/html_browser.rs:
//
//   node tests/browser/report.mjs REPORT.html OUTDIR HOSTILE_NAME [TEMPLATED.html]
//
// TEMPLATED.html, a report made with --templates, is checked for the
// template chunks of its first side-by-side view: their own colour, legend
// and title, apart from the shared chunks.
//
// Exits 0 when every check passed, 1 otherwise; screenshots go to OUTDIR.
import { chromium } from 'playwright-core';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [report, outdir, hostile, templated] = process.argv.slice(2);
if (!report || !outdir || !hostile) {
  console.error('usage: node report.mjs REPORT.html OUTDIR HOSTILE_NAME');
  process.exit(2);
}
const url = pathToFileURL(path.resolve(report)).href;
const templatedUrl = templated && pathToFileURL(path.resolve(templated)).href;
// The pages themselves are the only requests allowed.
const pages = new Set([url, templatedUrl]);
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
  const dialogs = [], requests = [], errors = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('request', (r) => { if (!pages.has(r.url())) requests.push(r.url()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);

  // Summary and table.
  check(await page.locator('#cards .card').count() === 8, 'summary cards shown');
  const rows = page.locator('#cbody tr.cluster');
  const n = await rows.count();
  check(n >= 3, `cluster table lists the clusters (${n})`);

  // Folder pairs first (the sample's manuals/v1 and v2), and the clusters
  // they explain hidden on request.
  const folderRows = await page.locator('#folders-body tr').count();
  check(folderRows >= 1, `folder pairs listed (${folderRows})`);
  check((await page.textContent('#folders-body')).includes('manuals/v2'), 'manuals/v1 and v2 paired');
  // A pair expands to its file-level differences, and folds again.
  const pairRow = page.locator('#folders-body tr.fpair').filter({ hasText: 'manuals/v2' }).first();
  await pairRow.click();
  const fdetail = page.locator('#folders-body tr.detail');
  check(await fdetail.count() === 1, 'a folder pair expands');
  const dt = await fdetail.textContent();
  check(dt.includes('Same in both') && dt.includes('Changed') && dt.includes('Only in'), `its file lists: ${dt.slice(0, 300)}`);
  check(/\d+\.\d%/.test(dt) || dt.includes('Changed (0'), 'changed files carry their percent');
  await pairRow.click();
  check(await fdetail.count() === 0, 'and folds');
  await page.check('#f-folders');
  const outside = await rows.count();
  check(outside < n && outside > 0, `clusters inside a folder pair hidden (${n} -> ${outside})`);
  await page.uncheck('#f-folders');
  check(await rows.count() === n, 'and shown again');

  // Sort by number of files: descending, then ascending on a second click.
  const filesCol = async () => (await page.locator('#cbody tr.cluster td:nth-child(4)').allTextContents())
    .map((s) => Number(s.replace(/,/g, '')));
  await page.click('th[data-key="files"]');
  let v = await filesCol();
  check(v.every((x, i) => i === 0 || v[i - 1] >= x), `sorted by files, descending: ${v}`);
  check(await page.getAttribute('th[data-key="files"]', 'aria-sort') === 'descending', 'header shows the sort');
  await page.click('th[data-key="files"]');
  v = await filesCol();
  check(v.every((x, i) => i === 0 || v[i - 1] <= x), `sorted by files, ascending: ${v}`);
  await page.click('th[data-key="largest"]');
  const names = await page.locator('#cbody tr.cluster td:nth-child(9)').allTextContents();
  check(names.every((x, i) => i === 0 || names[i - 1] <= x), 'sorted by largest file name');

  // Filter by path text: only the hostile file's cluster is left.
  await page.fill('#f-path', 'onerror');
  check(await rows.count() === 1, 'path filter leaves one cluster');
  check((await page.textContent('#count')).includes('1 of'), 'count says how many match');
  await page.selectOption('#f-type', 'clique');
  check(await rows.count() === 0, 'type filter combines with the path filter');
  await page.selectOption('#f-type', '');
  await page.fill('#f-pct', '99.9');
  check(await rows.count() === 0, 'min similarity filter');
  await page.fill('#f-pct', '');
  await page.fill('#f-size', '1G');
  check(await rows.count() === 0, 'min size filter');
  await page.fill('#f-size', '1K');
  check(await rows.count() === 1, 'min size filter with units');

  // Expand the cluster: its files and links, the hostile name as text.
  await rows.first().click();
  const detail = page.locator('#cbody tr.detail');
  check(await detail.isVisible(), 'cluster expands');
  check((await detail.textContent()).includes(hostile), 'hostile name shown as text in the files');
  check(await page.locator('img').count() === 0, 'no <img> element in the document');
  await page.screenshot({ path: path.join(outdir, 'report-clusters.png'), fullPage: true });

  // Side-by-side view with the shared chunks highlighted.
  await detail.locator('button.view').first().click();
  const viewer = page.locator('#viewer');
  check(await viewer.isVisible(), 'side-by-side view opens');
  const panes = page.locator('#viewer .pane');
  check(await panes.count() === 2, 'two panes');
  // Raw files: the title names no view, each pane says raw bytes.
  check((await page.textContent('#vtitle')) === 'Side-by-side view', 'the title of a raw pair names no view');
  check((await page.textContent('#pane-a .pmeta')).includes('raw bytes'), 'the pane says it compared raw bytes');
  const pnames = await page.locator('#viewer .pname').allTextContents();
  check(pnames.some((x) => x.endsWith(hostile)), 'hostile name shown as text in the view');
  for (const id of ['#pane-a', '#pane-b']) {
    const shared = await page.locator(`${id} pre span.sh`).count();
    const own = await page.locator(`${id} pre span.c:not(.sh)`).count();
    check(shared > 0 && own > 0, `${id}: ${shared} shared and ${own} unshared chunks marked`);
  }
  const bg = await page.locator('#pane-a pre span.sh').first()
    .evaluate((e) => getComputedStyle(e).backgroundColor);
  check(bg === 'rgb(255, 224, 138)', `shared chunks highlighted (${bg})`);
  check(await page.locator('#legend-tpl').isHidden(), 'no template legend without --templates');
  check(await page.locator('#viewer pre span.tp').count() === 0, 'no template chunks without --templates');
  const text = await page.locator('#viewer').textContent();
  check(text.includes("<script>alert('text')</script>"), 'file text shown as text');
  check(await page.locator('#viewer .map i.sh').count() > 0, 'chunk map marks shared chunks');
  // Scroll the hostile file's pane to its first unshared chunk, for the picture.
  await page.locator('#pane-a pre span.c:not(.sh)').first().scrollIntoViewIfNeeded();
  await page.locator('#pane-b pre span.c:not(.sh)').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(outdir, 'report-view.png') });
  await page.keyboard.press('Escape');
  check(!(await viewer.isVisible()), 'Escape closes the view');

  if (templated) {
    // A report made with --templates: the view of its one link.
    await page.goto(templatedUrl);
    await page.locator('#cbody tr.cluster').first().click();
    await page.locator('#cbody tr.detail button.view').first().click();
    check(await viewer.isVisible(), 'templated: side-by-side view opens');
    const legend = page.locator('#legend-tpl');
    check(await legend.isVisible(), 'templated: the legend shows template chunks');
    check((await legend.textContent()).includes('template chunk (ignored)'), 'templated: legend text');
    for (const id of ['#pane-a', '#pane-b']) {
      const tp = await page.locator(`${id} pre span.tp`).count();
      const sh = await page.locator(`${id} pre span.sh`).count();
      check(tp > 0 && sh > 0, `templated ${id}: ${tp} template and ${sh} shared chunks marked`);
      check(await page.locator(`${id} pre span.tp.sh`).count() === 0, `templated ${id}: no chunk marked both`);
      check(await page.locator(`${id} .map i.tp`).count() === tp, `templated ${id}: chunk map marks the template chunks`);
      check((await page.textContent(`${id} .pmeta`)).includes('in template chunks'), `templated ${id}: template bytes stated`);
    }
    const first = page.locator('#pane-a pre span.c').first();
    check(await first.getAttribute('class') === 'c tp', 'templated: the file starts with its template');
    check((await first.getAttribute('title')).includes('template chunk (ignored by the analysis'), 'templated: template chunk title');
    const tbg = await first.evaluate((e) => getComputedStyle(e).backgroundColor);
    const sbg = await page.locator('#pane-a pre span.sh').first()
      .evaluate((e) => getComputedStyle(e).backgroundColor);
    check(tbg === 'rgb(226, 227, 232)' && sbg === 'rgb(255, 224, 138)',
      `template chunks in their own colour (${tbg}), shared ones in theirs (${sbg})`);
    const shTitle = await page.locator('#pane-a pre span.sh').first().getAttribute('title');
    check(shTitle.endsWith(', in both files'), `shared chunk title (${shTitle})`);
    // Show where the template ends and the shared payload begins.
    await page.locator('#pane-a pre span.sh').first().scrollIntoViewIfNeeded();
    await page.locator('#pane-b pre span.sh').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(outdir, 'report-template-view.png') });
  }

  check(dialogs.length === 0, `no dialog fired (${dialogs})`);
  check(requests.length === 0, `no network request (${requests})`);
  check(errors.length === 0, `no script error (${errors})`);
} catch (e) {
  failed = true;
  console.error(String(e && e.stack || e));
} finally {
  await browser.close();
}
console.log(`browser: ${checks} checks passed${failed ? ', 1 failed' : ''}`);
process.exit(failed ? 1 : 0);
