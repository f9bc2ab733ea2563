// A report with one cluster of 10,000 files in a real headless Chromium
// (Debian's /usr/bin/chromium through playwright-core): the page opens,
// and expanding the cluster, showing more of its files and filtering by
// path respond. Prints each check and, last, one line
// `figures {"load_ms": ..., ...}` with the measured times. Run by
// tests/heavy/html_browser.rs:
//
//   node tests/browser/big.mjs REPORT.html OUTDIR FILES LIMIT_MS
//
// Exits 0 when every check passed (each time under LIMIT_MS), 1 otherwise.
import { chromium } from 'playwright-core';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [report, outdir, filesArg, limitArg] = process.argv.slice(2);
const files = Number(filesArg), limit = Number(limitArg);
const url = pathToFileURL(path.resolve(report)).href;
let checks = 0;
function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what);
  checks++;
  console.log('ok - ' + what);
}
const num = (s) => Number(String(s).replace(/,/g, ''));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--no-first-run'],
});
const figures = {};
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  // Load to interactive: navigation until the cluster table is drawn and
  // the page answers a script call.
  let t = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  const rows = page.locator('#cbody tr.cluster');
  await rows.first().waitFor();
  await page.evaluate(() => 1);
  figures.load_ms = Date.now() - t;
  check(await rows.count() === 1, 'one cluster in the table');
  check(num(await page.textContent('#cbody tr.cluster td:nth-child(4)')) === files, `the cluster has ${files} files`);

  // Expand it: sub-clusters, the first page of its files and links.
  t = Date.now();
  await rows.first().click();
  const detail = page.locator('#cbody tr.detail').first();
  await detail.waitFor();
  figures.expand_ms = Date.now() - t;
  const text = await detail.textContent();
  check(text.includes('Sub-clusters (single linkage)'), 'sub-clusters shown');
  check(text.includes('the 3 closest of each file shown'), 'the page says which links it shows');
  check(await page.locator('#cbody tr.detail table.files tbody tr').count() === 500, 'first 500 files listed');
  check((await page.textContent('button.more-files')).includes(`500 of ${files.toLocaleString('en-US')}`), 'the button says how many files are shown');
  await page.screenshot({ path: path.join(outdir, 'big-cluster.png') });

  // Show 500 more files.
  t = Date.now();
  await page.click('button.more-files');
  await page.locator('#cbody tr.detail table.files tbody tr').nth(999).waitFor();
  figures.more_files_ms = Date.now() - t;
  check(await page.locator('#cbody tr.detail table.files tbody tr').count() === 1000, '1000 files listed');

  // Filter by a path no file has, then by one that matches.
  t = Date.now();
  await page.fill('#f-path', 'no-such-file');
  await page.locator('#cbody td.empty').waitFor();
  figures.filter_ms = Date.now() - t;
  t = Date.now();
  await page.fill('#f-path', 'file009999');
  await rows.first().waitFor();
  figures.unfilter_ms = Date.now() - t;
  check(await rows.count() === 1, 'path search finds the cluster again');

  // Sort by reclaimable bytes.
  t = Date.now();
  await page.click('th[data-key="reclaim"]');
  await rows.first().waitFor();
  figures.sort_ms = Date.now() - t;
  check(errors.length === 0, `no script error (${errors})`);
  for (const [k, v] of Object.entries(figures)) check(v < limit, `${k} ${v} ms < ${limit} ms`);
} catch (e) {
  failed = true;
  console.error(String(e && e.stack || e));
} finally {
  await browser.close();
}
console.log('figures ' + JSON.stringify(figures));
console.log(`browser: ${checks} checks passed${failed ? ', 1 failed' : ''}`);
process.exit(failed ? 1 : 0);
