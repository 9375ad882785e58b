// A Jest reporter that lists the slowest test files at the end of a run, with their share of the whole: where CI's
// minutes go. Plain JavaScript: Jest loads reporters outside the TypeScript transform.
const SHOWN = 10;

export default class SlowestSuitesReporter {
  onRunComplete(_contexts, results) {
    const suites = results.testResults
      .map((suite) => ({ file: suite.testFilePath, ms: suite.perfStats.end - suite.perfStats.start }))
      .filter((suite) => Number.isFinite(suite.ms) && suite.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    if (suites.length === 0) return;
    const total = suites.reduce((sum, suite) => sum + suite.ms, 0);
    const root = `${process.cwd()}/`;
    const lines = suites
      .slice(0, SHOWN)
      .map(
        (suite) =>
          `  ${(suite.ms / 1000).toFixed(1).padStart(6)} s  ${((100 * suite.ms) / total).toFixed(1).padStart(4)}%  ` +
          suite.file.replace(root, ''),
      );
    process.stderr.write(
      `\nSlowest test files (of ${suites.length}, ${(total / 1000).toFixed(0)} s in all):\n${lines.join('\n')}\n`,
    );
  }
}
