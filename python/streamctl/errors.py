"""``StreamctlException``: an error a user can act on, raised in Python or carried over from the JVM.

streamctl's JVM errors are ``IllegalArgumentException``s with a ``STREAMCTL_*`` condition. PySpark
converts JVM errors to Python ones in one function per mode (``convert_exception`` for py4j in a
classic session, another for Spark Connect); importing streamctl wraps both, once, so that every
entry point (``load()``, ``start()``, ``save()``, the helpers) raises ``StreamctlException`` with
the JVM's message first, in a classic session and over Spark Connect alike (as delta-spark does
for its own errors). ``StreamctlException`` is a ``pyspark.errors.IllegalArgumentException``, so
code that catches Spark's errors still catches it.

Example::

    try:
        manager.set("orders", 9, streamctl.Startpoint.oldest())
    except streamctl.StreamctlException as e:
        print(e)  # Partition 9 of stream 'orders' does not exist (setting a startpoint): it has 4 partitions (0..3)
        print(e.getCondition())  # STREAMCTL_ERROR
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

from pyspark.errors import IllegalArgumentException, PySparkException

__all__ = ["CONDITION_PREFIX", "StreamctlException"]

CONDITION_PREFIX = "STREAMCTL_"
_DEFAULT_CONDITION = "STREAMCTL_ERROR"
# How PySpark appends the JVM's stack trace to a message (classic and Connect alike).
_STACKTRACE = "\n\nJVM stacktrace:"
_WRAPPED = "_streamctl_wrapped"
# PySpark 4.0 renamed an exception's error class its condition: its constructor takes
# errorClass/messageParameters beside a message; PySpark 3.5's takes error_class/message_parameters
# or a message, not both, and has no getCondition().
_CONDITION_AND_MESSAGE = "errorClass" in inspect.signature(PySparkException.__init__).parameters


class StreamctlException(IllegalArgumentException):
    """The message names what is wrong (option, stream, partition, offset, key); ``getCondition()``
    is ``STREAMCTL_ERROR`` or a more specific ``STREAMCTL_*`` condition, ``getMessageParameters()``
    its parameters (e.g. ``{"option": "max.records.per.batch"}``).

    Example::

        try:
            spark.readStream.format("streamctl").option("max.records.per.batch", "0").load()
        except streamctl.StreamctlException as e:
            print(e.getCondition(), e)  # STREAMCTL_ERROR Option 'max.records.per.batch' ...
    """

    def __init__(
        self, message: str, condition: str = _DEFAULT_CONDITION, parameters: dict[str, str] | None = None
    ) -> None:
        params = dict(parameters or {})
        if _CONDITION_AND_MESSAGE:
            super().__init__(message=message, errorClass=condition, messageParameters=params)
        else:
            super().__init__(message=message)
            self.error_class, self.message_parameters = condition, params
        self._streamctl = (message, condition)

    def getMessage(self) -> str:
        return self._streamctl[0]

    def getCondition(self) -> str:
        return self._streamctl[1]

    def __str__(self) -> str:
        return self.getMessage()


def _streamctl_error(error: Any) -> Any:
    """``error`` (what PySpark converted a JVM error to) as a ``StreamctlException`` when it carries
    a streamctl condition, else unchanged."""
    if isinstance(error, StreamctlException) or not isinstance(error, PySparkException):
        return error
    condition = _condition(error)
    if not condition or not condition.startswith(CONDITION_PREFIX):
        return error
    message = str(error).split(_STACKTRACE, 1)[0]
    converted = StreamctlException(message, condition, error.getMessageParameters())
    converted.__cause__ = error
    return converted


def _condition(error: PySparkException) -> str | None:
    return error.getCondition() if hasattr(error, "getCondition") else error.getErrorClass()


def _wrap(convert: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(convert, _WRAPPED, False):
        return convert

    def convert_exception(*args: Any, **kwargs: Any) -> Any:
        return _streamctl_error(convert(*args, **kwargs))

    setattr(convert_exception, _WRAPPED, True)
    return convert_exception


def _install() -> None:
    """Wraps PySpark's JVM-error conversion, classic and Connect; idempotent."""
    from pyspark.errors.exceptions import captured

    # Classic: capture_sql_exception and unwrap_spark_exception look the function up in the module.
    captured.convert_exception = _wrap(captured.convert_exception)
    try:
        from pyspark.errors.exceptions import connect
    except ImportError:  # no Spark Connect client installed (grpc): nothing to convert there
        return
    connect.convert_exception = _wrap(connect.convert_exception)
    # The Connect client imported the function by name; a client loaded before streamctl keeps the old one.
    core = sys.modules.get("pyspark.sql.connect.client.core")
    if core is not None and hasattr(core, "convert_exception"):
        core.convert_exception = _wrap(core.convert_exception)


_install()
