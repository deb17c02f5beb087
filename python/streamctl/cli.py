"""``python -m streamctl``: a local Kafka broker, the demo, and startpoint tools."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


def _broker(argv: Sequence[str]) -> int:
    from streamctl import broker

    return broker.main(list(argv))


def _demo(argv: Sequence[str]) -> int:
    from streamctl import demo

    return demo.main(list(argv))


def _startpoints(argv: Sequence[str]) -> int:
    from streamctl import startpoints_cli

    return startpoints_cli.main(list(argv))


COMMANDS: dict[str, tuple[Callable[[Sequence[str]], int], str]] = {
    "broker": (_broker, "run a local single-node Kafka broker (KRaft) until Ctrl-C"),
    "demo": (_demo, "run the end-to-end demo on an embedded broker"),
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
