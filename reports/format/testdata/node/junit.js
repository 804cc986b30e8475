// Parses a junit.xml with test-results-parser (a widely used npm JUnit consumer) and prints the
// totals it sees, so the Go test can compare them with what we meant to write.
const { parse } = require('test-results-parser');
const r = parse({ type: 'junit', files: [process.argv[2]] });
console.log(JSON.stringify({
  total: r.total, passed: r.passed, failed: r.failed, errors: r.errors, skipped: r.skipped,
  suites: r.suites.map(s => ({ name: s.name, total: s.total, failed: s.failed,
    cases: s.cases.map(c => ({ name: c.name, status: c.status, failure: c.failure || '' })) })),
}));
