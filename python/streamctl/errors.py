"""``StreamctlException``: an error a user can act on, raised in Python or carried over from the JVM.

Example::

    try:
        manager.set("orders", 9, streamctl.Startpoint.oldest())
    except streamctl.StreamctlException as e:
        print(e)  # Partition 9 of stream 'orders' does not exist (it has 4 partitions)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from py4j.protocol import Py4JJavaError

_JVM_CLASS = "streamctl.StreamctlException"


class StreamctlException(Exception):
    """The message names what is wrong (option, stream, partition, offset, key)."""


@contextmanager
def jvm_errors() -> Iterator[None]:
    """Turns a streamctl error thrown in the JVM into a ``StreamctlException`` with its message,
    instead of a py4j error wrapping a Java stack trace."""
    try:
        yield
    except Py4JJavaError as e:
        cause = e.java_exception
        while cause is not None:
            if cause.getClass().getName() == _JVM_CLASS:
                raise StreamctlException(str(cause.getMessage())) from None
            cause = cause.getCause()
        raise
