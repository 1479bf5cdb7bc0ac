"""Shared settings of the larmor Python tests (run with PYTHONPATH=<build>/python)."""
import os
import pathlib

import numpy as np
import pytest

import larmor

SOURCE_DIR = pathlib.Path(os.environ.get("LARMOR_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def inputs():
    return SOURCE_DIR / "inputs"


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


@pytest.fixture
def train():
    """A fingerprinting train where T1, T2, B1 and off-resonance all shape the signals: an
    inversion, then 40 rows of the shipped schedule (varying flips, phases and TRs)."""
    return larmor.build("mrf", schedule=str(SOURCE_DIR / "inputs" / "mrf-schedule-1000.csv"),
                        repetitions=40)
