"""What the tests share (loaded as a pytest plugin by tests/conftest.py: plugin.py)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
