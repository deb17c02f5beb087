"""streamctl: Samza-style stream control for PySpark Structured Streaming over Kafka."""

__version__ = "0.1.0"
