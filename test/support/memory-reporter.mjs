// A Jest reporter that reports the peak memory of the test run: the resident memory of the Jest
// process and of every process under it (its test worker, servers, PostgreSQL, Chromium, CLIs),
// summed, sampled every 250 ms from /proc. Plain JavaScript: Jest loads reporters outside the TypeScript transform.
import { readdirSync, readFileSync } from 'node:fs';

const SAMPLE_MS = 250;
const MIB = 1024 * 1024;

export default class MemoryReporter {
  peakTree = 0;
  timer = undefined;

  onRunStart() {
    if (!haveProc()) return;
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  onRunComplete() {
    clearInterval(this.timer);
    if (this.timer === undefined) {
      process.stderr.write('\nPeak memory of this test run: not measured (no /proc here).\n');
      return;
    }
    process.stderr.write(`\nPeak memory of this test run: ${mib(this.peakTree)} MiB, resident, summed over Jest, its test worker and every process they started (sampled every ${SAMPLE_MS} ms).\n`);
  }

  sample() {
    try {
      this.peakTree = Math.max(this.peakTree, treeRss(process.pid));
    } catch {
      // A process that ended between listing and reading is simply not counted.
    }
  }
}

function haveProc() {
  try {
    readFileSync('/proc/self/status');
    return true;
  } catch {
    return false;
  }
}

/** The resident bytes of `root` and all its descendants. */
function treeRss(root) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const ppid = parentOf(name);
    if (ppid === undefined) continue;
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
  }
  let total = 0;
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop();
    total += rssOf(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return total;
}

function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after its last ')' are fixed.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function rssOf(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

function mib(bytes) {
  return (bytes / MIB).toFixed(0);
}
