"""The product carries only the product: the streamctl wheel and the jar inside it (what a cluster
installs) hold no test, demo or bench tooling; the streamctl-testing wheel and jar hold it, and
``python -m streamctl broker|demo`` reach it when it is installed.

Inspects what ./build.sh put into dist/; builds nothing.
"""

from __future__ import annotations

import io
import os
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from streamctl._jars import LINES

DIST = Path(__file__).resolve().parent.parent / "dist"
ROOT = DIST.parent
# The jars the fixtures inspect: those of the line the full suite runs on (every line's jar is
# built from the same sources; test_every_spark_line_has_its_jars checks that each is there).
PRODUCT_JAR = "streamctl-spark4.3_2.13.jar"
TESTING_JAR = "streamctl-testing-spark4.3_2.13.jar"
PRODUCT_JARS = r"streamctl/jars/(streamctl-spark[\d.]+_[\d.]+|kafka-clients-[\d.]+)\.jar"

# Python modules of the tooling, wherever they might end up.
TOOLING_MODULES = {"broker.py", "_kafka_jars.py", "_proc.py", "kafka.py", "testing.py", "demo.py"}
# JVM names of the tooling (streamctl-testing jar) and of the Kafka admin calls only tooling makes.
TOOLING_CLASSES = ("KafkaTools", "IntermediateTools", "StreamOrderChooser")
# What product Python would say to call into the tooling.
TOOLING_CALLS = ("streamctl.testing", "KafkaTools", "IntermediateTools", "produce_", "send_watermark", "send_end_of")


def _one(pattern: str) -> Path:
    found = sorted(DIST.glob(pattern))
    assert len(found) == 1, f"expected exactly one {pattern} in {DIST} (./build.sh package builds it), found {found}"
    return found[0]


def _zip(data: bytes | Path) -> zipfile.ZipFile:
    return zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)


def _classes(jar: zipfile.ZipFile) -> dict[str, bytes]:
    return {n: jar.read(n) for n in jar.namelist() if n.endswith(".class")}


def _referenced_classes(class_file: bytes) -> set[str]:
    """Internal names of every class a class file refers to: its constant pool's class entries and
    the class names inside its descriptors and signatures."""
    return _class_info(class_file)[0]


def _supertypes(class_file: bytes) -> list[str]:
    return _class_info(class_file)[1]


def _class_info(class_file: bytes) -> tuple[set[str], list[str]]:
    """What ``_referenced_classes`` returns, and the internal names of the class's superclass and
    of the interfaces it implements."""
    sizes = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
    (count,) = struct.unpack_from(">H", class_file, 8)
    pos, index, utf8 = 10, 1, {}
    class_entries: dict[int, int] = {}  # pool index of a class entry -> pool index of its name
    while index < count:
        tag = class_file[pos]
        if tag == 1:
            (length,) = struct.unpack_from(">H", class_file, pos + 1)
            utf8[index] = class_file[pos + 3 : pos + 3 + length].decode("utf-8", errors="replace")
            pos += 3 + length
        else:
            if tag == 7:
                class_entries[index] = struct.unpack_from(">H", class_file, pos + 1)[0]
            pos += 1 + sizes[tag]
        index += 2 if tag in (5, 6) else 1
    # After the pool: access flags, this class, the superclass, then the interfaces (count, indexes):
    # each a class entry's index.
    (super_index, interfaces) = struct.unpack_from(">HH", class_file, pos + 4)
    supers = (super_index, *struct.unpack_from(f">{interfaces}H", class_file, pos + 8))
    names = {utf8[i].lstrip("[") for i in class_entries.values()}
    names = {n[1:-1] if n.startswith("L") and n.endswith(";") else n for n in names}
    for text in utf8.values():
        names.update(re.findall(r"L([\w/$]+)[;<]", text))
    return {n for n in names if "/" in n}, [utf8[class_entries[i]] for i in supers]


@pytest.fixture(scope="module")
def product_wheel() -> zipfile.ZipFile:
    return _zip(_one("streamctl-0.1.0-*.whl"))


@pytest.fixture(scope="module")
def testing_wheel() -> zipfile.ZipFile:
    return _zip(_one("streamctl_testing-0.1.0-*.whl"))


@pytest.fixture(scope="module")
def product_jar(product_wheel: zipfile.ZipFile) -> zipfile.ZipFile:
    data = product_wheel.read(f"streamctl/jars/{PRODUCT_JAR}")
    assert data == _one(PRODUCT_JAR).read_bytes(), "the wheel's jar is not the jar in dist/"
    return _zip(data)


@pytest.fixture(scope="module")
def testing_jar(testing_wheel: zipfile.ZipFile) -> zipfile.ZipFile:
    data = testing_wheel.read(f"streamctl_testing/jars/{TESTING_JAR}")
    assert data == _one(TESTING_JAR).read_bytes(), "the wheel's jar is not the jar in dist/"
    return _zip(data)


def test_the_product_wheel_holds_no_tooling(product_wheel: zipfile.ZipFile) -> None:
    names = [n for n in product_wheel.namelist() if ".dist-info/" not in n]
    assert "streamctl/__init__.py" in names and "streamctl/cli.py" in names

    tooling = [
        n
        for n in names
        if not n.startswith("streamctl/")
        or n.rsplit("/", 1)[-1] in TOOLING_MODULES
        or "/demos/" in n
        or n.endswith(".xml")
        or (n.endswith(".jar") and not re.fullmatch(PRODUCT_JARS, n))
    ]
    assert tooling == []

    # No product module calls into the tooling, except the CLI's delegation to streamctl-testing.
    for name in names:
        if name.endswith(".py"):
            source = product_wheel.read(name).decode()
            for word in TOOLING_CALLS:
                assert word not in source, f"{name} mentions tooling: {word}"
            if name != "streamctl/cli.py":
                assert "streamctl_testing" not in source, f"{name} imports streamctl_testing"


def test_the_product_wheel_carries_the_kafka_clients_it_was_compiled_against(product_wheel: zipfile.ZipFile) -> None:
    version = re.search(r"<kafka.version>([\d.]+)</kafka.version>", (ROOT / "pom.xml").read_text())
    assert version is not None
    jar = f"kafka-clients-{version.group(1)}.jar"
    lines = [f"streamctl-spark{line}_{scala}.jar" for line, scalas in LINES.items() for scala in scalas]
    assert sorted(n for n in product_wheel.namelist() if n.endswith(".jar")) == sorted(
        f"streamctl/jars/{j}" for j in [jar, *lines]
    )
    for j in [jar, *lines]:
        assert product_wheel.read(f"streamctl/jars/{j}") == (DIST / j).read_bytes(), j


def test_every_spark_line_has_its_jars(product_wheel: zipfile.ZipFile, testing_wheel: zipfile.ZipFile) -> None:
    """One streamctl and one streamctl-testing jar per Spark line and Scala version, each compiled
    for its line: the adapter class of a line that has real-time mode refers to Spark's interface."""
    for line, scalas in LINES.items():
        for scala in scalas:
            product = _zip(product_wheel.read(f"streamctl/jars/streamctl-spark{line}_{scala}.jar"))
            assert "streamctl/spark/StreamctlProvider.class" in product.namelist()
            # What the jar checks the running Spark against (spark.SparkLine).
            assert f"spark.version={line}." in product.read("streamctl/spark-line.properties").decode()
            assert f"streamctl_testing/jars/streamctl-testing-spark{line}_{scala}.jar" in testing_wheel.namelist()
            reader = _referenced_classes(product.read("streamctl/spark/RealTimeReader.class"))
            real_time = "org/apache/spark/sql/connector/read/streaming/SupportsRealTimeRead" in reader
            assert real_time == (tuple(map(int, line.split("."))) >= (4, 1)), (line, scala)


def test_the_product_jar_holds_no_tooling(product_jar: zipfile.ZipFile) -> None:
    classes = _classes(product_jar)
    assert "streamctl/spark/StreamctlProvider.class" in classes
    # kafka-clients is not bundled (the wheel carries its jar beside this one), let alone relocated.
    own = ("streamctl/", "org/apache/spark/streamctl/", "META-INF/")
    parents = ("org/", "org/apache/", "org/apache/spark/")
    assert [n for n in product_jar.namelist() if not n.startswith(own) and n not in parents] == []

    tooling = [
        n
        for n in classes
        if n.startswith(("streamctl/testing/", "streamctl/chooser/examples/")) or any(c in n for c in TOOLING_CLASSES)
    ]
    assert tooling == []
    users = [n for n, data in classes.items() if b"streamctl/testing" in data or b"streamctl.testing" in data]
    assert users == [], "product classes that refer to streamctl.testing"
    admin = classes["streamctl/system/KafkaSystemAdmin.class"]
    assert [m for m in (b"createStream", b"growStream", b"awaitServed") if m in admin] == []


def test_spark_package_only_adapts(product_jar: zipfile.ZipFile) -> None:
    """spark/ only adapts the feature packages to Spark (docs/architecture.md): a class there that
    refers to nothing of Spark is feature logic in the wrong home. Checked per top-level class, on
    what the compiled class refers to (an unused import would not count)."""
    classes = _classes(product_jar)
    refs: dict[str, set[str]] = {}
    for name, data in classes.items():
        if name.startswith("streamctl/spark/"):
            top = name.removeprefix("streamctl/spark/").removesuffix(".class").split("$")[0]
            refs.setdefault(top, set()).update(_referenced_classes(data))
    assert "StreamctlMicroBatchStream" in refs

    def uses_spark(top: str) -> bool:
        # A subclass of an adapter adapts too (one small class per Spark metric name, say), though
        # its own class file names only its parent; so does a class implementing an adapter trait.
        if any(u.startswith("org/apache/spark/") for u in refs[top]):
            return True
        parents = [t.removeprefix("streamctl/spark/") for t in _supertypes(classes[f"streamctl/spark/{top}.class"])]
        return any(p in refs and p != top and uses_spark(p) for p in parents)

    without_spark = sorted(t for t in refs if not uses_spark(t))
    assert without_spark == [], "move these to their feature package"

    # And nothing else (features, planner, ops) reaches back into the adapter.
    adapter = ("streamctl/spark/", "streamctl/shaded/")
    outside = [n for n in classes if n.startswith("streamctl/") and not n.startswith(adapter)]
    assert "streamctl/planner/Planner.class" in outside
    backwards = sorted(n for n in outside if any(u.startswith(adapter[0]) for u in _referenced_classes(classes[n])))
    assert backwards == []


ARCHITECTURE = ROOT / "docs" / "architecture.md"
# The table of packages in docs/architecture.md, between these markers: layer, package, what it uses.
GRAPH_BEGIN, GRAPH_END = "<!-- package graph: begin -->", "<!-- package graph: end -->"
# Where Spark is allowed: the adapter and the files that need Spark's internals.
SPARK_PACKAGES = ("spark", "org.apache.spark.streamctl")


def _package(class_name: str) -> str | None:
    """The streamctl package of a class, as docs/architecture.md names it (`streamctl` for the
    shared basics at the root), or None for a class that is not streamctl's."""
    if class_name.startswith("org/apache/spark/streamctl/"):
        return "org.apache.spark.streamctl"
    if not class_name.startswith("streamctl/"):
        return None
    parts = class_name.split("/")
    return "streamctl" if len(parts) == 2 else parts[1]


def _documented_graph() -> tuple[dict[str, int], dict[str, set[str]]]:
    """(layer of each package, packages each one uses) as the table in docs/architecture.md says."""
    text = ARCHITECTURE.read_text()
    assert GRAPH_BEGIN in text and GRAPH_END in text, f"{ARCHITECTURE} lost its package table"
    table = text.split(GRAPH_BEGIN, 1)[1].split(GRAPH_END, 1)[0]
    layers: dict[str, int] = {}
    uses: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        package = cells[1].strip("`")
        layers[package] = int(cells[0])
        uses[package] = set(re.findall(r"`([\w.]+)`", cells[2]))
    return layers, uses


def _jar_graph(classes: dict[str, bytes]) -> dict[str, set[str]]:
    """Which streamctl packages each package's compiled classes refer to (itself left out)."""
    graph: dict[str, set[str]] = {}
    for name, data in classes.items():
        package = _package(name)
        if package is None:
            continue
        used = {_package(u) for u in _referenced_classes(data)}
        graph.setdefault(package, set()).update(u for u in used if u is not None and u != package)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of `graph` as a path, or [] when it has none."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_packages_depend_one_way_as_the_architecture_page_draws_them(product_jar: zipfile.ZipFile) -> None:
    """The jar's package graph is exactly the table in docs/architecture.md (so the page cannot
    drift from the code), has no cycle, and every edge goes down the layers, except between
    feature packages (one layer), where the table names each edge."""
    layers, documented = _documented_graph()
    actual = _jar_graph(_classes(product_jar))
    assert "planner" in actual and "plan" in actual
    assert set(actual) == set(layers), "packages missing from (or only in) docs/architecture.md's table"
    differences = {
        p: {"in the jar only": sorted(actual[p] - documented[p]), "in the page only": sorted(documented[p] - actual[p])}
        for p in sorted(actual)
        if actual[p] != documented[p]
    }
    assert differences == {}, "docs/architecture.md's package table and the jar disagree"

    assert _cycle(actual) == []
    features = {layers["chooser"]}
    upward = sorted(
        (p, q)
        for p, used in actual.items()
        for q in used
        if layers[q] > layers[p] or (layers[q] == layers[p] and layers[p] not in features)
    )
    assert upward == [], "edges that go up the layers (or sideways outside the features)"


def test_only_the_spark_adapters_use_spark(product_jar: zipfile.ZipFile) -> None:
    """Everything but spark/ (and the three files of Spark internals) is plain JVM code: ops/ runs
    in a JVM without Spark's jars (`streamctl describe`, `streamctl startpoints`), and so must
    everything it uses."""
    classes = _classes(product_jar)
    users = sorted(
        name
        for name, data in classes.items()
        if _package(name) not in (*SPARK_PACKAGES, None)
        and any(u.startswith("org/apache/spark/") and _package(u) is None for u in _referenced_classes(data))
    )
    assert users == []
    assert any(_package(n) == "ops" for n in classes)
    # The streamctl command's JVM takes none of Spark's jars either (its errors are plain ones there).
    from streamctl import _ops

    spark_jars = [j for j in _ops.classpath().split(os.pathsep) if Path(j).name.startswith("spark-")]
    assert spark_jars == []


def test_the_testing_wheel_carries_the_tooling(testing_wheel: zipfile.ZipFile) -> None:
    names = set(testing_wheel.namelist())
    package = {n.removeprefix("streamctl_testing/") for n in names if n.startswith("streamctl_testing/")}
    assert {
        "kafka_broker/pom.xml",
        "CreateTopics.java",
        "GrantAcls.java",
        f"jars/{TESTING_JAR}",
        "demo.py",
        "demos/affinity.py",
        "demos/choosers.py",
        "demos/grouping.py",
        "demos/pipeline.py",
        "demos/startpoints.py",
        "control.py",
        *(TOOLING_MODULES - {"testing.py", "demo.py"}),
    } <= package
    assert [n for n in names if not n.startswith(("streamctl_testing/", "streamctl_testing-0.1.0.dist-info/"))] == []
    metadata = testing_wheel.read("streamctl_testing-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Dist: streamctl==0.1.0" in metadata.splitlines()


def test_the_testing_jar_holds_the_tooling_and_needs_only_the_product_jar(
    testing_jar: zipfile.ZipFile, product_jar: zipfile.ZipFile
) -> None:
    classes = _classes(testing_jar)
    for name in (
        "KafkaTools",
        "IntermediateTools",
        "examples/StreamOrderChooser",
        "plugins/FileCredentialsCallbackHandler",
        "plugins/LastBytePartitioner",
    ):
        assert f"streamctl/testing/{name}.class" in classes
    # Nothing bundled.
    assert [n for n in testing_jar.namelist() if not n.startswith(("streamctl/", "META-INF/"))] == []
    assert [n for n in classes if not n.startswith("streamctl/testing/")] == []

    # Every class it uses comes from the JDK, Scala or Spark (the cluster's runtime), kafka-clients
    # (the session's one copy), itself, or the product jar.
    available = {n.removesuffix(".class") for n in (*_classes(product_jar), *classes)}
    runtime = ("java/", "javax/", "scala/", "org/apache/spark/", "org/apache/kafka/")
    missing = {
        (name, used)
        for name, data in classes.items()
        for used in _referenced_classes(data)
        if not used.startswith(runtime) and used not in available
    }
    assert missing == set()


def _streamctl(args: list[str], *, without_testing: bool = False) -> subprocess.CompletedProcess[str]:
    # sys.modules[name] = None makes `import name` fail as if the package were not installed.
    block = "sys.modules['streamctl_testing'] = None; " if without_testing else ""
    code = f"import sys; {block}from streamctl.cli import main; sys.exit(main({args!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("command", "option"), [("broker", "--fetch-only"), ("demo", "--servers")])
def test_broker_and_demo_commands_run_from_streamctl_testing(command: str, option: str) -> None:
    done = _streamctl([command, "--help"])
    assert done.returncode == 0, done.stderr
    assert f"usage: python -m streamctl {command}" in done.stdout
    assert option in done.stdout


@pytest.mark.parametrize("command", ["broker", "demo"])
def test_without_streamctl_testing_broker_and_demo_say_what_to_install(command: str) -> None:
    done = _streamctl([command, "--help"], without_testing=True)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"streamctl {command}: needs the streamctl-testing package" in lines[0]
    assert "pip install streamctl-testing" in lines[0]

    # The product's own commands need no tooling.
    startpoints = _streamctl(["startpoints", "--help"], without_testing=True)
    assert startpoints.returncode == 0, startpoints.stderr
