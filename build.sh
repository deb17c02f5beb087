#!/usr/bin/env bash
# The one entry point: ./build.sh demo | test | bench | package | smoke (the other Spark lines' smoke tests) | format
# Creates its own venv (.venv), builds the jars (Maven: the product jar and the streamctl-testing
# jar) and the two wheels that carry them (streamctl, the product; streamctl-testing, the broker,
# Kafka helpers and demo that developers, tests and benchmarks use), and installs both into the
# venv; a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
VENV="$ROOT/.venv"
PY="$VENV/bin/python"
# pyspark[connect]: the Spark Connect client (tests run a real Connect server); test-only, like pytest.
# pytest-xdist: the Python tests run in two processes (TEST_WORKERS).
# pytest-timeout: a test that hangs fails with its threads' stacks instead of using up CI's time.
PY_DEPS="pyspark[connect]==4.3.0 pandas<3 pytest==9.2.0 pytest-xdist==3.8.0 pytest-timeout==2.4.0 ruff==0.17.6 build==1.6.1 wheel==0.48.0 setuptools"
# The Spark lines streamctl is built for besides 4.3, one jar each (pom.xml's profiles,
# -Dspark.line=<line>; 4.3 is the default, compiled against .venv's pyspark jars), as
# <line>:<scala>:<pyspark the smoke tests run on, in .venv-pyspark-<version>>. A line built for two
# Scala versions (3.5) names the profile with it (3.5_2.12); its jar is still spark3.5_<scala>. A
# Scala PyPI's pyspark does not carry (3.5 with 2.13) runs on that pyspark with its jars replaced by
# the same Spark's for that Scala (<version>-scala<scala>; streamctl_testing.other_scala).
OTHER_LINES=(4.2:2.13:4.2.1 4.1:2.13:4.1.4 4.0:2.13:4.0.5 3.5_2.12:2.12:3.5.9 3.5_2.13:2.13:3.5.9-scala2.13)
# tests/test_install.py installs the wheel where a cluster's pyspark is: a venv of its own (it
# uninstalls and reinstalls streamctl there, which the smoke tests running meanwhile must not see).
OTHER_PYSPARK=4.2.1
OTHER_VENV="$ROOT/.venv-install-pyspark-$OTHER_PYSPARK"
# pyspark 3.5's Connect client needs NumPy 1 (pyspark[connect] 3.5 pins it), which pyarrow 21 and later refuse.
other_py_deps() {
  local extra="" version=${1%%-scala*}
  [[ $version == 3.5.* ]] && extra=" pyarrow<21"
  echo "pyspark[connect]==$version pandas<3 pytest==9.2.0 pytest-xdist==3.8.0 pytest-timeout==2.4.0$extra"
}
# Much of a test's time is waiting (for a batch, a broker, a killed driver to restart): two
# processes, each with its own broker and SparkSession, keep CI's two cores busy. A test file
# stays in one process (its module fixtures are set up once).
TEST_WORKERS=(-n 2 --dist loadfile)
# The longest test takes under 3 minutes; a test's first fixtures may build class-data archives
# (up to 10 minutes each on a cold machine). 20 minutes is a hang.
TEST_TIMEOUT=(--timeout=1200 --timeout-method=thread)
LOG="$ROOT/target/build-logs"
export SPARK_LOCAL_IP=127.0.0.1
export PYSPARK_PYTHON="$PY"

# Each line carries the seconds since the build started, so CI's log shows where its time goes.
say() { printf '==> [%4d s] %s\n' "$SECONDS" "$*"; }

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

# make_venv DIR LOGNAME DEPS...: a venv at DIR with DEPS, reinstalled only when DEPS change.
make_venv() {
  local dir=$1 log=$2; shift 2
  local deps="$*" stamp="$dir/.streamctl-deps"
  # A venv whose creation failed half-way (no pip in it) is made again, not kept for good.
  if [[ ! -x "$dir/bin/python" ]] || ! "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
    say "creating venv $dir"
    rm -rf "$dir"
    python3.11 -m venv "$dir"
  fi
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$deps" ]]; then
    say "installing $deps into $dir"
    # --no-compile: Python compiles what is imported when it is first imported; compiling every
    # module at install was half of pip's CPU (15 against 29 CPU-seconds for a line's venv).
    quiet "$log" "$dir/bin/pip" install --disable-pip-version-check --no-compile "$@"
    echo "$deps" >"$stamp"
  fi
}

ensure_venv() {
  make_venv "$VENV" pip $PY_DEPS
  SPARK_JARS=$("$PY" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
}

# ensure_other_venv PYSPARK: a venv with that pyspark (<version>-scala<scala>: its Spark for that
# Scala), and both wheels (installed without deps: the install test checks separately what pip
# does with them).
ensure_other_venv() {
  local dir=${2:-$ROOT/.venv-pyspark-$1}
  make_venv "$dir" "pip-$1" $(other_py_deps "$1")
  quiet "install-$1" "$dir/bin/pip" install --disable-pip-version-check --no-deps --force-reinstall \
    "$ROOT"/dist/streamctl-0.1.0-*.whl "$ROOT"/dist/streamctl_testing-0.1.0-*.whl
  if [[ $1 == *-scala* ]]; then
    quiet "scala-$1" "$dir/bin/python" -m streamctl_testing.other_scala "${1##*-scala}"
  fi
  # The Connect server jar a 3.5 pyspark lacks, before its smoke run starts a server.
  quiet "connect-$1" "$dir/bin/python" -c \
    'from streamctl_testing.connect_server import fetch_server_jars; fetch_server_jars()'
  # That line's Spark Kafka connector (tests/test_spark_kafka.py runs beside it), fetched here
  # rather than by a smoke test, within its timeout, beside another line's fetch into one ~/.m2.
  quiet "kafka-$1" "$dir/bin/python" -c \
    'from streamctl_testing.spark_kafka import spark_kafka_jars; spark_kafka_jars()'
}

mvn_() { mvn -B -q -Dspark.jars.dir="$SPARK_JARS" "$@"; }

build_jar() {  # $1: "skip" to skip the Scala tests
  start_other_lines
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
  rm -f python/streamctl/jars/*.jar python/streamctl_testing/jars/*.jar
  # The wheel carries the kafka-clients jar streamctl was compiled against (not bundled, not relocated).
  cp target/kafka-clients-*.jar python/streamctl/jars/
  take_jars target 4.3 2.13
  take_other_lines
}

# take_jars DIR LINE SCALA: the line's two jars, from Maven's DIR into the wheels' folders, named
# as python/streamctl/_jars.py looks them up.
take_jars() {
  cp "$1/streamctl-0.1.0.jar" "python/streamctl/jars/streamctl-spark$2_$3.jar"
  cp "$1/streamctl-0.1.0-testing.jar" "python/streamctl_testing/jars/streamctl-testing-spark$2_$3.jar"
}

# The jars of the other Spark lines, compiled against each line's own Spark from Maven Central
# (provided scope; pom.xml's profile spark-<line> adds the line's adapter sources), all at once
# (each builds in its own target/spark-<line>). Their Scala tests are not compiled or run here (a
# whole scalac run per line that CI's two cores would pay for): the smoke tests run on each line's
# pyspark instead. start_other_lines starts them in the background (`test` starts them first: they
# need no venv, so they compile while pip installs); take_other_lines waits and takes their jars.
OTHER_BUILDS=()
OTHER_STARTED=0
start_other_lines() {
  local spec line
  [[ $OTHER_STARTED -eq 1 ]] && return 0
  OTHER_STARTED=1
  # A developer working on 4.3 alone can skip the other lines (their jars are then absent).
  [[ "${STREAMCTL_SKIP_OTHER_LINES:-}" == 1 ]] && return 0
  mkdir -p "$LOG"
  # A failed 4.3 build exits the script: its background builds must not outlive it.
  trap 'kill "${OTHER_BUILDS[@]}" 2>/dev/null || true' EXIT
  for spec in "${OTHER_LINES[@]}"; do
    IFS=: read -r line _ _ <<<"$spec"
    say "building the jar for Spark $line (in the background)"
    mvn -B -q -Dspark.line="$line" -Dmaven.test.skip=true package >"$LOG/maven-spark-$line.log" 2>&1 &
    OTHER_BUILDS+=($!)
  done
}

take_other_lines() {
  local line scala failed=0 i
  for i in "${!OTHER_BUILDS[@]}"; do
    IFS=: read -r line scala _ <<<"${OTHER_LINES[$i]}"
    if ! wait "${OTHER_BUILDS[$i]}"; then
      echo "FAILED: the jar for Spark $line (log: $LOG/maven-spark-$line.log)" >&2
      tail -n 40 "$LOG/maven-spark-$line.log" >&2
      failed=1
    else
      take_jars "target/spark-$line" "${line%_*}" "$scala"
    fi
  done
  [[ $failed -eq 0 ]] || exit 1
  [[ ${#OTHER_BUILDS[@]} -eq 0 ]] || say "took the other Spark lines' jars"
  OTHER_BUILDS=()  # reaped: the exit trap must not signal their (reusable) process ids
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
  rm -f "$ROOT"/dist/*.jar
  cp python/streamctl/jars/*.jar python/streamctl_testing/jars/*.jar "$ROOT/dist/"
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

# streamctl must also run on the kafka-clients that spark-sql-kafka-0-10 brings (3.9.x): compiling
# against it proves no API it lacks is used (tests/test_spark_kafka.py runs on it).
# One format for both languages (scalafmt through Maven's spotless plugin, ruff format): `format`
# applies it, `test` fails on any file that differs from it, and on ruff's lint rules.
check_format() {
  say "checking the format and lint (./build.sh format fixes the format)"
  quiet spotless mvn -B spotless:check
  "$VENV/bin/ruff" format --check python tests bench
  "$VENV/bin/ruff" check python tests bench
}

fetch_broker() {
  # The broker's jars come from Maven Central through Maven, cached once per machine; so does Spark's
  # own Kafka connector, which tests run beside streamctl.
  "$PY" -m streamctl broker --fetch-only >/dev/null
  "$PY" -c 'from streamctl_testing.spark_kafka import spark_kafka_jars; spark_kafka_jars()' >/dev/null
  # Kafka's command-line tools (the consumer-group tests run kafka-consumer-groups): fetched here,
  # not by two test workers at once in one ~/.m2.
  "$PY" -c 'from streamctl_testing._kafka_jars import ensure_kafka_tools_jars; ensure_kafka_tools_jars()' >/dev/null
}

ensure_other_venvs() {
  local spec pyspark
  for spec in "${OTHER_LINES[@]}"; do
    IFS=: read -r _ _ pyspark <<<"$spec"
    ensure_other_venv "$pyspark"
  done
  ensure_other_venv "$OTHER_PYSPARK" "$OTHER_VENV"
}

# The other lines' venvs without the wheels: downloading pyspark from PyPI waits on the network, so
# `test` does it while Maven compiles (the wheels go in once they are built), all five at once (one
# after the other they were still unpacking two minutes after the jars were built).
make_other_venvs() {
  local spec pyspark pids=() rc=0 pid
  for spec in "${OTHER_LINES[@]}"; do
    IFS=: read -r _ _ pyspark <<<"$spec"
    make_venv "$ROOT/.venv-pyspark-$pyspark" "pip-$pyspark" $(other_py_deps "$pyspark") &
    pids+=($!)
  done
  make_venv "$OTHER_VENV" "pip-install-$OTHER_PYSPARK" $(other_py_deps "$OTHER_PYSPARK") &
  pids+=($!)
  for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
  return $rc
}

# The smoke tests (-m smoke) of every other line, each in its own venv and pytest process. A smoke
# worker takes the lines no worker has taken yet, one after the other (a line is taken by creating
# its directory under $SMOKE_CLAIMS, which only one worker can do), and prints each line's result
# and time; it fails when a line it ran failed or collected nothing, after running the rest.
# `test` runs one worker beside the 4.3 suite (a smoke run alone keeps about one core busy, the
# suite's two processes the rest) and a second once the suite is done. All five lines at once
# beside the suite did far less work per CPU-second: 26 minutes for what took 11.6 (the suite
# alone) plus about 2 a line (docs/spark-lines.md).
SMOKE_CLAIMS="$LOG/smoke-claims"
smoke_worker() {
  local spec line pyspark venv rc=0 start code summary
  for spec in "${OTHER_LINES[@]}"; do
    IFS=: read -r line _ pyspark <<<"$spec"
    mkdir "$SMOKE_CLAIMS/$pyspark" 2>/dev/null || continue
    venv="$ROOT/.venv-pyspark-$pyspark"
    say "running the smoke tests on pyspark $pyspark (Spark $line), log: $LOG/smoke-$pyspark.log"
    start=$SECONDS
    code=0
    (cd "$ROOT" && PYSPARK_PYTHON="$venv/bin/python" "$venv/bin/pytest" -q -p no:cacheprovider --durations=8 "${TEST_TIMEOUT[@]}" -m smoke tests \
      >"$LOG/smoke-$pyspark.log" 2>&1) || code=$?
    summary=$(grep -E '^[0-9]+ (passed|failed|error)|^no tests ran' "$LOG/smoke-$pyspark.log" | tail -n 1)
    if [[ $code -ne 0 ]]; then
      rc=1
      grep -E '^(FAILED|ERROR)' "$LOG/smoke-$pyspark.log" | head -n 30 >&2
    fi
    say "smoke pyspark $pyspark: exit $code in $((SECONDS - start)) s: $summary"
  done
  return $rc
}

# A fresh set of lines for the smoke workers to take.
new_smoke_round() { rm -rf "$SMOKE_CLAIMS"; mkdir -p "$SMOKE_CLAIMS"; }

# Spark's scratch directories (spark-*, blockmgr-*) for every JVM the tests start, emptied at the
# start of a run. Spark deletes them at a clean stop, but tests SIGKILL drivers and executors on
# purpose, each leaving its directories in /tmp (4 GB of them had piled up on one developer's
# machine); here they go with the next run or with target/.
fresh_spark_scratch() {
  export SPARK_LOCAL_DIRS="$ROOT/target/spark-scratch"
  rm -rf "$SPARK_LOCAL_DIRS"; mkdir -p "$SPARK_LOCAL_DIRS"
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
    mkdir -p "$LOG"
    # The other lines' jars need no venv: they compile while pip downloads.
    start_other_lines
    make_other_venvs >"$LOG/other-venvs.log" 2>&1 &
    venvs=$!
    ensure_venv
    check_format
    build_jar; build_wheels; fetch_broker; ensure_chromium
    if ! wait $venvs; then cat "$LOG/other-venvs.log" >&2; exit 1; fi
    ensure_other_venvs
    # One smoke worker beside the 4.3 suite, a second once it is done (see smoke_worker).
    new_smoke_round; fresh_spark_scratch
    smoke_worker >"$LOG/smoke-1.log" 2>&1 &
    smoke_first=$!
    say "running the Python tests (real Kafka broker, real SparkSession and Spark Connect server; pyspark 4.3.0)"
    export STREAMCTL_OTHER_PYSPARK_VENV="$OTHER_VENV"
    set +e
    (cd "$ROOT" && "$VENV/bin/pytest" -q -p no:cacheprovider --durations=30 "${TEST_WORKERS[@]}" "${TEST_TIMEOUT[@]}" tests)
    rc=$?
    say "the 4.3 suite finished"
    smoke_worker >"$LOG/smoke-2.log" 2>&1
    smoke=$?
    wait $smoke_first || smoke=1
    cat "$LOG/smoke-1.log" "$LOG/smoke-2.log"
    set -e
    if [[ $rc -eq 5 ]]; then echo "FAILED: pytest collected no tests" >&2; exit 1; fi
    [[ $rc -ne 0 ]] && exit $rc
    exit $smoke
    ;;
  format)
    ensure_venv
    mvn -B -q spotless:apply
    "$VENV/bin/ruff" format python tests bench
    ;;
  smoke)
    # Only the other lines' smoke tests, on what ./build.sh package built last.
    ensure_venv; mkdir -p "$LOG"; fetch_broker; ensure_other_venvs
    # Nothing else running: two workers keep both cores busy.
    new_smoke_round; fresh_spark_scratch
    smoke_worker & first=$!
    rc=0
    smoke_worker || rc=1
    wait $first || rc=1
    exit $rc
    ;;
  bench)
    ensure_venv; build_jar skip; build_wheels; fetch_broker
    say "running the benchmarks"
    "$PY" "$ROOT/bench/run.py" "${@:2}"
    ;;
  *)
    echo "usage: ./build.sh demo | test | bench | package | smoke | format"
    exit 2
    ;;
esac
