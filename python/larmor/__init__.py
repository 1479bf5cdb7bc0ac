"""larmor from Python: EPG simulation, derivatives and estimation on NumPy arrays.

Sequences come from a deck file (read_deck), a builder with the deck's keys
(build('mese', echoes=32, echo_spacing_ms=10.0)) or a Pulseq file
(read_pulseq); a Tissue from arrays in deck units (t1_ms, t2_ms, b1, ...).
isochromat_simulator() plays a Pulseq file on the isochromat engine instead,
for files EPG cannot represent.
simulate() returns complex64 signals [voxels, samples] that the kernels write
in place; jvp() adds the derivatives along m0, t1_ms, t2_ms, b1 and
off_resonance_hz; vjp() is the adjoint (tissue and sequence gradients);
Dictionary and fit_nlls estimate tissue from signals. docs/python.md is the
reference; larmor.torch wraps simulate() as a torch.autograd.Function.
"""
import atexit
import math
import os
import sys

from ._interpreter import BUILT_FOR as _BUILT_FOR

try:
    import numpy as np

    from . import _larmor
except ImportError as error:
    raise ImportError(
        f"larmor was built for {_BUILT_FOR} and cannot be imported by {sys.executable} "
        f"({error}); run it with {_BUILT_FOR}, or build with -DPython3_EXECUTABLE="
        f"{sys.executable} (which needs NumPy)") from error
from ._larmor import (  # noqa: F401 (re-exported)
    Deck,
    DeckError,
    Dictionary,
    IsochromatSimulator,
    Sequence,
    Simulator,
    Tissue,
    __version__,
    backend,
    build,
    builder_names,
    threads,
)

__all__ = [
    "DIRECTIONS",
    "Deck",
    "DeckError",
    "Derivatives",
    "Dictionary",
    "Gradients",
    "IsochromatSimulator",
    "Sequence",
    "Simulator",
    "Tissue",
    "__version__",
    "backend",
    "build",
    "builder_names",
    "fit_nlls",
    "hvp",
    "isochromat_simulator",
    "jvp",
    "read_deck",
    "read_pulseq",
    "simulate",
    "simulator",
    "steady_state",
    "threads",
    "tissue_derivatives",
    "vjp",
]

DeckError.__module__ = "larmor"  # raised as larmor.DeckError

# Kokkos starts on the first run; it must stop before the interpreter does.
atexit.register(_larmor._finalize)

#: The tissue directions of forward mode and of the adjoint's tissue gradients, in order.
DIRECTIONS = ("m0", "t1_ms", "t2_ms", "b1", "off_resonance_hz")


def read_deck(path):
    """Read an input deck (docs/input-deck.md).

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Deck
        .sequence, .tissue (None without [tissue]), .tissue_shape, .max_order.

    Raises
    ------
    DeckError
        Naming the file, line and key.
    """
    return _larmor._read_deck(os.fspath(path))


def read_pulseq(path, **options):
    """Read a Pulseq file as a Sequence.

    Parameters
    ----------
    path : str or os.PathLike
    **options
        The deck's pulseq keys (adc, split_pulses, voxel_size_mm, ...; docs/pulseq.md).

    Returns
    -------
    Sequence
    """
    return build("pulseq", file=os.path.abspath(os.fspath(path)), **options)


def isochromat_simulator(path, *, isochromats=None, isochromat_accuracy=None, longest_t2_ms=None,
                         **options):
    """A Pulseq file on the isochromat engine (docs/pulseq.md, "The isochromat engine").

    Plays the file's own waveforms over a grid of isochromats per voxel, sized by the windings
    its gradients put across the voxel, as `larmor simulate` does under
    `engine = "isochromat"` (or `"auto"` where EPG refuses the file).

    Parameters
    ----------
    path : str or os.PathLike
    isochromats : int, optional
        Isochromats per voxel in place of the count the windings need.
    isochromat_accuracy : float, optional
        The bound the grid is sized for (default 1e-3).
    longest_t2_ms : float, optional
        The tissue's longest T2: the grid resolves only the pulse-to-pulse spans a coherence
        outlives (as a deck's grid tissue tells `larmor simulate`); without it, every span.
    **options
        The deck's pulseq keys (adc, voxel_size_mm, b0_t, ...; docs/pulseq.md).

    Returns
    -------
    IsochromatSimulator
        .simulate(tissue, mz=False) gives signals [voxels, samples] (complex64) and, with
        mz=True, Mz [voxels, samples] too; .isochromats, .report, .sample_times_s.
    """
    simulation = {}
    if isochromats is not None:
        simulation["isochromats"] = isochromats
    if isochromat_accuracy is not None:
        simulation["isochromat_accuracy"] = isochromat_accuracy
    return _larmor._isochromat_simulator(os.path.abspath(os.fspath(path)), options, simulation,
                                         longest_t2_ms)


def simulator(sequence, max_order=None):
    """A Simulator for `sequence`.

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
        A Simulator is returned as is.
    max_order : int, optional
        The highest EPG order kept (default: the deck's, else the sequence's automatic cap).

    Returns
    -------
    Simulator
    """
    if isinstance(sequence, Simulator):
        if max_order is not None and max_order != sequence.max_order:
            raise ValueError(
                f"max_order={max_order} for a Simulator built with max_order={sequence.max_order}")
        return sequence
    if isinstance(sequence, Deck):
        return Simulator(sequence.sequence, sequence.max_order if max_order is None else max_order)
    return Simulator(sequence, -1 if max_order is None else max_order)


def _tissue(tissue):
    if isinstance(tissue, Tissue):
        return tissue
    if isinstance(tissue, dict):
        return Tissue(**tissue)
    raise TypeError("tissue must be a larmor.Tissue or a dict of its properties")


def simulate(sequence, tissue, *, max_order=None, out=None):
    """Simulate `sequence` for every voxel of `tissue`.

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
    tissue : Tissue or dict
        Arrays of shape [voxels] (or numbers) in deck units: m0, t1_ms, t2_ms, b1,
        off_resonance_hz, ...
    max_order : int, optional
    out : ndarray of shape [voxels, samples], complex64, optional
        Written in place by the kernels when given.

    Returns
    -------
    ndarray of shape [voxels, samples], complex64
        The samples in units of M0.
    """
    return simulator(sequence, max_order).simulate(_tissue(tissue), out)


def steady_state(sequence, tissue, *, max_order=None, tolerance=1e-6, max_repetitions=20000):
    """Repeat `sequence` until every voxel's samples settle.

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
    tissue : Tissue or dict
    max_order : int, optional
    tolerance : float
        The largest change of a sample between periods, in units of M0.
    max_repetitions : int

    Returns
    -------
    signals : ndarray of shape [voxels, samples], complex64
        The last period's samples.
    periods : ndarray of shape [voxels], int
        Each voxel's periods to settle.
    """
    return simulator(sequence, max_order).steady_state(_tissue(tissue), tolerance,
                                                       max_repetitions)


class Derivatives:
    """Forward mode: `signals` [voxels, samples] and `tangents` [voxels, 5, samples] (complex64)
    along DIRECTIONS, per deck unit; d['t2_ms'] is tangents[:, 2]."""

    def __init__(self, signals, tangents):
        self.signals = signals
        self.tangents = tangents

    def __getitem__(self, name):
        return self.tangents[:, DIRECTIONS.index(name)]

    def __iter__(self):  # signals, tangents = larmor.jvp(...)
        return iter((self.signals, self.tangents))


def jvp(sequence, tissue, *, max_order=None):
    """Signals and their derivatives along DIRECTIONS (forward mode).

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
    tissue : Tissue or dict
    max_order : int, optional

    Returns
    -------
    Derivatives
        signals [voxels, samples] and tangents [voxels, 5, samples], complex64, per deck unit.
    """
    return Derivatives(*simulator(sequence, max_order).jvp(_tissue(tissue)))


#: Another name for jvp.
tissue_derivatives = jvp


class Gradients:
    """The adjoint of simulate() for the loss sum Re(conj(w) y): `tissue` [voxels, 5] per deck
    unit (DIRECTIONS), `events` [events, 3] (flip per rad, phase per rad, duration per s, summed
    over voxels) and `flip_deg` (per pulse event, per degree); `events` and `flip_deg` are None
    where the run skipped the sequence derivatives."""

    def __init__(self, tissue, events, pulse_events, tissue_hvp=None, events_hvp=None):
        self.tissue = tissue
        self.events = events
        self.flip_deg = None if events is None else events[pulse_events, 0] * (math.pi / 180.0)
        self.tissue_hvp = tissue_hvp
        self.events_hvp = events_hvp

    def __getitem__(self, name):
        return self.tissue[:, DIRECTIONS.index(name)]


def vjp(sequence, tissue, cotangents, *, max_order=None, checkpoint_interval=0,
        sequence_gradients=True):
    """Gradients of the loss sum Re(conj(w) y) (reverse mode).

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
    tissue : Tissue or dict
    cotangents : ndarray of shape [voxels, samples] (complex) or [voxels, samples, 2]
        w, or its real and imaginary parts.
    max_order : int, optional
    checkpoint_interval : int
        Events between stored states of the reverse sweep (0: chosen by larmor).
    sequence_gradients : bool
        False: the tissue gradients alone (a tissue fit's faster run; `events` and `flip_deg`
        are None).

    Returns
    -------
    Gradients
        tissue [voxels, 5], events [events, 3], flip_deg [pulses].
    """
    sim = simulator(sequence, max_order)
    tg, sg = sim.vjp(_tissue(tissue), np.asarray(cotangents), checkpoint_interval,
                     sequence_gradients)
    return Gradients(tg, sg, sim.sequence.pulse_events)


def hvp(sequence, tissue, directions, cotangents, *, max_order=None, checkpoint_interval=0):
    """vjp() and the Hessian-vector products along `directions`.

    Parameters
    ----------
    sequence, tissue, cotangents, max_order, checkpoint_interval
        As for vjp().
    directions : ndarray of shape [voxels, 5]
        Tissue directions in deck units, ordered as DIRECTIONS.

    Returns
    -------
    Gradients
        As vjp()'s, with tissue_hvp [voxels, 5] and events_hvp [events, 3] (the sequence
        gradients' derivatives along `directions`).
    """
    sim = simulator(sequence, max_order)
    tg, sg, th, sh = sim.hvp(_tissue(tissue), np.asarray(directions, dtype=np.float32),
                             np.asarray(cotangents), checkpoint_interval)
    return Gradients(tg, sg, sim.sequence.pulse_events, th, sh)


def fit_nlls(sequence, tissue, measured, estimate, *, max_order=None, iterations=40,
             step_tolerance=1e-6):
    """Voxel-wise magnitude non-linear least squares of M0 and the properties in `estimate`.

    Parameters
    ----------
    sequence : Sequence, Deck or Simulator
    tissue : Tissue or dict
        The fixed properties, shape [voxels] or numbers.
    measured : ndarray of shape [voxels, samples]
        Finite signals, not all zero in any voxel (else ValueError naming the voxel).
    estimate : dict
        name -> (low, high, 'log' or 'linear'), e.g. {'t2_ms': (10.0, 500.0, 'log')}.
    max_order : int, optional
    iterations : int
    step_tolerance : float

    Returns
    -------
    dict of ndarray of shape [voxels]
        m0 and each estimated property (deck units), cost (the final sum of squared
        residuals) and iterations.
    """
    return _larmor.fit_nlls(simulator(sequence, max_order), _tissue(tissue), np.asarray(measured),
                            estimate, iterations, step_tolerance)
