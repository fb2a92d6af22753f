#!/usr/bin/env bash
# Runs the test suite (the CLI tests run the demo and the other commands as subprocesses), the
# fuzzers briefly, the suite under TSan and ASan, the nginx integration script, builds the
# examples and the documentation. Installs the system libraries first when they are missing
# (Debian/Ubuntu, as root or with sudo). The corpus is read from ../shared/testdata.
set -euo pipefail
cd "$(dirname "$0")/.."
WEBIMAGE_TEST_TOOLS=1 . scripts/install-deps.sh
# Our own code (the examples included: they are targets of this package) builds without
# warnings (dependencies' warnings are theirs). --no-color-diagnostics: the same compile commands
# with and without a terminal, so that neither rebuilds what the other built.
swift build --build-tests --no-color-diagnostics 2>&1 | tee .build-warnings.log
if grep -E "^$PWD/(Sources|Tests|Examples)/.*warning:" .build-warnings.log; then
  echo "test.sh: warnings in the project's code" >&2
  exit 1
fi
# The fuzzers are built first (both cores). Then coverage-guided fuzzing of every decoder entry
# and of the HTTP response path, under AddressSanitizer, FUZZ_SECONDS each (default 30), runs one
# target at a time on one core beside the suite on the other; any finding fails the run and is
# kept in Tests/WebImageTests/Fixtures/FuzzFindings. Its summary is printed after the suite's.
FUZZ_STEP=build bash scripts/fuzz.sh all
# setsid: the fuzzers form their own process group, so that a failed suite stops all of them.
FUZZ_STEP=run FUZZ_JOBS=1 setsid bash scripts/fuzz.sh all "${FUZZ_SECONDS:-30}" >.fuzz-output.log 2>&1 &
fuzzing=$!
trap 'kill -- -$fuzzing 2>/dev/null || true' EXIT
# Serially: the loader tests assert timings (timeouts, prompt aborts) that CPU-heavy image tests
# running beside them on two cores would distort (one fuzzer on the other core does not: the
# sanitized suites below pass running two at once). About 7 minutes. A failure is repeated at
# the end of the output, since a CI log is often read from its tail.
if ! swift test --no-parallel --no-color-diagnostics 2>&1 | tee .test-output.log; then
  echo "test.sh: the suite failed; its failures:" >&2
  grep -E "✘|recorded an issue" .test-output.log >&2 || true
  exit 1
fi
fuzzed=0
wait "$fuzzing" || fuzzed=$?
trap - EXIT
cat .fuzz-output.log
if [ "$fuzzed" -ne 0 ]; then
  echo "test.sh: fuzzing failed (above)" >&2
  exit 1
fi
# The whole suite again under ThreadSanitizer (less the corpus sweeps that run on one thread)
# and under AddressSanitizer (with UBSan's checks in the C shim): built one after the other
# (about 6 minutes each on 2 cores), then the two suites side by side (each keeps under one core
# busy; about 9 minutes). Any report fails the run.
bash scripts/sanitize.sh thread address
# The loader against a real nginx (keep-alive, HTTP/2 over TLS, gzip).
bash scripts/nginx-integration.sh
# The documentation builds with no warnings.
bash scripts/docs.sh
