"""Demo steps that need more than a few lines each (``python -m streamctl demo`` runs them)."""
