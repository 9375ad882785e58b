// A Jest reporter that reports the peak memory of the test run: the memory of the Jest process and
// of every process under it (its test worker, servers, PostgreSQL, Chromium, CLIs), summed and
// sampled from /proc. Each process counts its proportional set size (PSS: a page shared by n
// processes counts 1/n in each), so PostgreSQL's shared buffers and Chromium's shared pages are
// counted once, not once per process as resident sizes would. Plain JavaScript: Jest loads reporters outside the
// TypeScript transform.
import { readdirSync, readFileSync } from 'node:fs';

const SAMPLE_MS = 500;
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
    process.stderr.write(
      `\nPeak memory of this test run: ${mib(this.peakTree)} MiB (proportional set size summed over Jest, its ` +
        `test worker and every process they started, sampled every ${SAMPLE_MS} ms).\n`,
    );
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
    total += memoryOf(pid);
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

/** The process's proportional set size in bytes; its resident size where the kernel has no smaps_rollup. */
function memoryOf(pid) {
  for (const [file, field] of [
    ['smaps_rollup', 'Pss'],
    ['status', 'VmRSS'],
  ]) {
    try {
      const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'));
      if (match !== null) return Number(match[1]) * 1024;
    } catch {
      // Gone, or this kernel has no such file: try the next.
    }
  }
  return 0;
}

function mib(bytes) {
  return (bytes / MIB).toFixed(0);
}
