"""The README's first example, extracted from README.md and run exactly as written: its shell lines
(install the wheels into a fresh venv, start ``python -m streamctl broker`` with a fixed port and its
topics) and its Python script (batch write, streaming copy, batch read of the plain output)."""

from __future__ import annotations

import os
import re
import selectors
import shlex
import signal
import subprocess
import venv
from pathlib import Path

import pyspark

ROOT = Path(__file__).resolve().parent.parent


def _example() -> tuple[list[str], str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Ten lines of PySpark") :]
    section = section[: section.index("\n## ", 1)]
    shell = re.search(r"```bash\n(.*?)```", section, re.S)
    script = re.search(r"```python\n(.*?)```", section, re.S)
    assert shell and script, "the README's first section has a bash and a python block"
    return [line for line in shell.group(1).splitlines() if line.strip()], script.group(1)


def _fresh_venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True).create(path)
    # pyspark itself comes from the build's own venv rather than a 400 MB download: a directory
    # holding only pyspark and py4j, on the fresh venv's path. So `pip install "pyspark==4.3.0" ...`
    # finds it installed, and the wheels are installed fresh.
    shared = path / "pyspark-only"
    shared.mkdir()
    site = Path(pyspark.__file__).resolve().parent.parent
    for entry in site.iterdir():
        if entry.name.startswith(("pyspark", "py4j")):
            (shared / entry.name).symlink_to(entry)
    (next((path / "lib").glob("python3*")) / "site-packages" / "pyspark-only.pth").write_text(f"{shared}\n")
    return path / "bin"


def test_the_readme_example_runs_as_written(tmp_path):
    shell, script = _example()
    install, broker_line = shell
    assert install.startswith("pip install ") and broker_line.endswith(" &"), shell
    bin_dir = _fresh_venv(tmp_path / "venv")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(bin_dir.parent)}
    env.pop("PYTHONPATH", None)
    # Run from the repository, where the README's `dist/...` paths point; the shell expands the globs.
    subprocess.run(install, shell=True, cwd=ROOT, env=env, check=True, capture_output=True)

    broker = subprocess.Popen(
        shlex.split(broker_line[: -len(" &")]),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        ready = selectors.DefaultSelector()
        ready.register(broker.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
        assert ready.select(timeout=180), "the broker printed its address within 180 s"
        address = broker.stdout.readline().decode().strip()  # type: ignore[union-attr]
        # An empty line means the broker ended: its stderr says why.
        why = address or broker.stderr.read().decode(errors="replace")[-4000:]  # type: ignore[union-attr]
        assert address == "127.0.0.1:9092", why

        work = tmp_path / "job"
        work.mkdir()
        (work / "example.py").write_text(script)
        run = subprocess.run(
            [str(bin_dir / "python"), "example.py"], cwd=work, env=env, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert run.stdout.strip().splitlines()[-1] == "1000"
        # The wheel that ran is the fresh venv's, not the build's.
        assert (
            str(bin_dir.parent)
            in subprocess.run(
                [str(bin_dir / "python"), "-c", "import streamctl; print(streamctl.__file__)"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
    finally:
        os.killpg(broker.pid, signal.SIGTERM)
        try:
            broker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(broker.pid, signal.SIGKILL)
            broker.wait()
