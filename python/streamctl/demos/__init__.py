"""Demo steps of ``python -m streamctl demo``, one module per capability."""
