"""Evals: scenario suites run on real models (see README, "Evals")."""
