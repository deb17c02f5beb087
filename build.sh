#!/usr/bin/env bash
# The one entry point: ./build.sh demo | test | bench | package
# Creates its own venv (.venv), builds the jars (Maven: the product jar and the streamctl-testing
# jar) and the two wheels that carry them (streamctl, the product; streamctl-testing, the broker,
# Kafka helpers and demo that developers, tests and benchmarks use), and installs both into the
# venv; a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
PY_DEPS="pyspark==4.3.0 py4j pyarrow pytest ruff build wheel setuptools"
LOG="$ROOT/target/build-logs"
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON="$PY"

say() { printf '==> %s\n' "$*"; }

# Runs a noisy step quietly; shows its log only when it fails.
quiet() {
  local name=$1; shift
  mkdir -p "$LOG"
  if ! "$@" >"$LOG/$name.log" 2>&1; then
    echo "FAILED: $name (log: $LOG/$name.log)" >&2
    tail -n 60 "$LOG/$name.log" >&2
    exit 1
  fi
}

ensure_venv() {
  local stamp="$VENV/.streamctl-deps"
  if [[ ! -x "$PY" ]]; then
    say "creating venv $VENV"
    python3.11 -m venv "$VENV" 2>/dev/null || python3 -m venv "$VENV"
  fi
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$PY_DEPS" ]]; then
    say "installing $PY_DEPS"
    quiet pip "$VENV/bin/pip" install --disable-pip-version-check $PY_DEPS
    echo "$PY_DEPS" >"$stamp"
  fi
  SPARK_JARS=$("$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
}

mvn_() { mvn -B -q -Dspark.jars.dir="$SPARK_JARS" "$@"; }

build_jar() {  # $1: "skip" to skip the Scala tests
  if [[ "${1:-}" == skip ]]; then
    say "building the jar"
    quiet maven mvn_ package -DskipTests
  else
    say "building the jar and running the Scala tests"
    rm -rf "$ROOT/target/surefire-reports"
    if ! mvn_ package >"$LOG/maven-test.log" 2>&1; then
      grep -E '(Tests run:|FAIL|ERROR|expected|Exception)' "$LOG/maven-test.log" | head -n 60 >&2
      scala_summary || true
      echo "FAILED: Maven build or Scala tests (log: $LOG/maven-test.log)" >&2
      exit 1
    fi
    scala_summary
  fi
  mkdir -p python/streamctl/jars python/streamctl_testing/jars
  cp target/streamctl-0.1.0.jar python/streamctl/jars/streamctl.jar
  cp target/streamctl-0.1.0-testing.jar python/streamctl_testing/jars/streamctl-testing.jar
}

scala_summary() {
  python3 - "$ROOT/target/surefire-reports" <<'PYEOF'
import glob, sys, xml.etree.ElementTree as ET
t = f = e = s = 0
for path in glob.glob(sys.argv[1] + "/TEST-*.xml"):
    r = ET.parse(path).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0)); e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
if t == 0:
    print("FAILED: no Scala tests ran", file=sys.stderr); sys.exit(1)
print(f"Scala: {t - f - e - s} passed, {f + e} failed, {s} skipped")
sys.exit(1 if f + e else 0)
PYEOF
}

# dist/ gets both wheels and both jars; .venv gets both wheels.
build_wheels() {
  say "building the wheels (streamctl, streamctl-testing)"
  local testing="$ROOT/python/streamctl_testing"
  rm -rf "$ROOT/build" "$ROOT"/python/*.egg-info "$testing/build" "$testing"/*.egg-info
  rm -f "$ROOT"/dist/streamctl-0.1.0-*.whl "$ROOT"/dist/streamctl_testing-0.1.0-*.whl
  quiet wheel "$PY" -m build --wheel --no-isolation --outdir "$ROOT/dist" "$ROOT"
  quiet wheel-testing "$PY" -m build --wheel --no-isolation --outdir "$ROOT/dist" "$testing"
  rm -rf "$testing/build" "$testing"/*.egg-info
  cp target/streamctl-0.1.0.jar target/streamctl-0.1.0-testing.jar "$ROOT/dist/"
  quiet install "$VENV/bin/pip" install --disable-pip-version-check --no-deps --force-reinstall \
    "$ROOT"/dist/streamctl-0.1.0-*.whl "$ROOT"/dist/streamctl_testing-0.1.0-*.whl
}

# tests/test_operations.py renders `streamctl report` in headless Chromium (Debian's package).
ensure_chromium() {
  command -v chromium >/dev/null 2>&1 && return
  say "installing chromium (headless, for the report test)"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q chromium >"$LOG/chromium.log" 2>&1; then
    quiet apt-update apt-get update -q
    quiet chromium apt-get install -y -q chromium
  fi
}

fetch_broker() {
  # The broker's jars come from Maven Central through Maven, cached once per machine.
  "$PY" -m streamctl broker --fetch-only >/dev/null
}

cmd=${1:-help}
case "$cmd" in
  package)
    ensure_venv; build_jar skip; build_wheels
    say "dist/: $(cd dist && ls)"
    ;;
  demo)
    ensure_venv; build_jar skip; build_wheels; fetch_broker
    say "running the demo"
    (cd /tmp && "$PY" -m streamctl demo)
    ;;
  test)
    ensure_venv
    mkdir -p "$LOG"
    build_jar; build_wheels; fetch_broker; ensure_chromium
    say "ruff"
    "$VENV/bin/ruff" check python tests bench
    say "running the Python tests (real Kafka broker, real SparkSession)"
    set +e
    (cd "$ROOT" && "$VENV/bin/pytest" -q -p no:cacheprovider tests)
    rc=$?
    set -e
    if [[ $rc -eq 5 ]]; then echo "FAILED: pytest collected no tests" >&2; exit 1; fi
    exit $rc
    ;;
  bench)
    ensure_venv; build_jar skip; build_wheels; fetch_broker
    say "running the benchmarks"
    "$PY" "$ROOT/bench/run.py" "${@:2}"
    ;;
  *)
    echo "usage: ./build.sh demo | test | bench | package"
    exit 2
    ;;
esac
