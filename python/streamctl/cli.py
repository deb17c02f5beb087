"""``python -m streamctl``: startpoint tools, and (with streamctl-testing installed) a local Kafka
broker and the demo."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

TESTING_DISTRIBUTION = "streamctl-testing"


def _from_testing(command: str, module: str) -> Callable[[Sequence[str]], int]:
    """A command that lives in the streamctl-testing distribution (developer tooling a cluster does
    not install): runs ``streamctl_testing.<module>.main`` when it is installed, else says what to
    install and exits 2."""

    def run(argv: Sequence[str]) -> int:
        try:
            importlib.import_module("streamctl_testing")
        except ModuleNotFoundError as e:
            if e.name != "streamctl_testing":
                raise
            print(
                f"python -m streamctl {command}: needs the {TESTING_DISTRIBUTION} package, which is not installed "
                f"(pip install {TESTING_DISTRIBUTION}; ./build.sh package builds its wheel into dist/)",
                file=sys.stderr,
            )
            return 2
        result: int = importlib.import_module(f"streamctl_testing.{module}").main(list(argv))
        return result

    return run


def _startpoints(argv: Sequence[str]) -> int:
    from streamctl import startpoints_cli

    return startpoints_cli.main(list(argv))


COMMANDS: dict[str, tuple[Callable[[Sequence[str]], int], str]] = {
    "broker": (
        _from_testing("broker", "broker"),
        f"run a local single-node Kafka broker (KRaft) until Ctrl-C (needs {TESTING_DISTRIBUTION})",
    ),
    "demo": (
        _from_testing("demo", "demo"),
        f"run the end-to-end demo on an embedded broker (needs {TESTING_DISTRIBUTION})",
    ),
    "startpoints": (_startpoints, "set, list or delete a query's startpoints (see startpoints --help)"),
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in COMMANDS:
        print("usage: python -m streamctl <command> [options]\n\ncommands:")
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:<12} {text}")
        return 0 if args and args[0] in ("-h", "--help") else 2
    command, _ = COMMANDS[args[0]]
    return command(args[1:])
