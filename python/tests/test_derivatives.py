"""Forward mode against central differences; the adjoint against forward mode (the inner-product
identity) and against central differences of the flip angles; forward over reverse against a
difference of adjoints."""
import numpy as np
import pytest

import larmor

# Voxels of distinct values in every direction (conftest.train: all of them shape its signals).
TISSUE = dict(m0=[1.0, 0.7, 1.3], t1_ms=[800.0, 1200.0, 1500.0], t2_ms=[60.0, 90.0, 150.0],
              b1=[0.9, 1.0, 1.1], off_resonance_hz=[3.0, -2.0, 5.0])
# Central-difference steps in deck units. The truncation error (h^2/6 |f'''|) is below 1e-4 of
# the largest derivative at each; the float32 signals' rounding (up to about 1e-7 absolute, for
# |y| < 0.2) over 2h stays below 4e-4 of it: T2's derivative (about 1e-4 per ms) and off
# resonance's (about 3e-3 per Hz) need the widest steps.
STEPS = dict(m0=0.1, t1_ms=2.0, t2_ms=1.0, b1=1e-3, off_resonance_hz=0.1)


def shifted(name, h):
    values = {k: np.array(v, dtype=np.float64) for k, v in TISSUE.items()}
    values[name] = values[name] + h
    return larmor.Tissue(**values)


@pytest.mark.parametrize("k,name", list(enumerate(larmor.DIRECTIONS)))
def test_forward_mode_matches_central_differences(train, k, name):
    d = larmor.jvp(train, larmor.Tissue(**TISSUE))
    assert d.tangents.shape == (3, 5, train.samples) and d.tangents.dtype == np.complex64
    h = STEPS[name]
    plus = larmor.simulate(train, shifted(name, h)).astype(np.complex128)
    minus = larmor.simulate(train, shifted(name, -h)).astype(np.complex128)
    difference = (plus - minus) / (2 * h)
    scale = np.abs(d[name]).max()
    assert scale > 0
    # 1e-3 of the largest derivative: ten times the truncation and rounding bounds above.
    np.testing.assert_allclose(d[name], difference, rtol=0, atol=1e-3 * scale)
    # The value part is the forward simulation; the forward kernel defers each interval's
    # relaxation to the next pulse and forward mode does not, so they agree to the float32
    # rounding of ~100 event updates (~1e-5 relative), as below.
    signals = larmor.simulate(train, larmor.Tissue(**TISSUE))
    np.testing.assert_allclose(d.signals, signals, rtol=0, atol=1e-5 * np.abs(signals).max())


def test_adjoint_tissue_gradients_are_the_transpose_of_forward_mode(train, rng):
    tissue = larmor.Tissue(**TISSUE)
    w = (rng.standard_normal((3, train.samples)) + 1j * rng.standard_normal((3, train.samples)))
    w = w.astype(np.complex64)
    g = larmor.vjp(train, tissue, w)
    tangents = larmor.jvp(train, tissue).tangents.astype(np.complex128)
    # <J e_k, w> per voxel and direction = (J^T w)_k: the identity <J v, w> = <v, J^T w> with v
    # each unit vector.
    forward = np.einsum("vks,vs->vk", tangents, np.conj(w)).real
    assert g.tissue.shape == (3, 5)
    for k in range(5):
        scale = np.abs(forward[:, k]).max()
        # Both sides carry float32 rounding of ~100 event updates (~1e-5 relative); sums of 8
        # terms of either sign lose a factor of a few more.
        np.testing.assert_allclose(g.tissue[:, k], forward[:, k], rtol=0, atol=1e-4 * scale)
    # The real and imaginary parts given apart are the same cotangent.
    split = larmor.vjp(train, tissue, np.stack([w.real, w.imag], axis=-1))
    np.testing.assert_array_equal(split.tissue, g.tissue)
    # A tissue fit's run, without the sequence derivatives, satisfies the same identity.
    alone = larmor.vjp(train, tissue, w, sequence_gradients=False)
    assert alone.events is None and alone.flip_deg is None
    for k in range(5):
        scale = np.abs(forward[:, k]).max()
        np.testing.assert_allclose(alone.tissue[:, k], forward[:, k], rtol=0, atol=1e-4 * scale)


def loss(seq, tissue, w):
    return float(np.sum((np.conj(w) * larmor.simulate(seq, tissue).astype(np.complex128)).real))


def test_adjoint_flip_gradients_match_central_differences(train, rng):
    tissue = larmor.Tissue(**TISSUE)
    w = (rng.standard_normal((3, train.samples)) + 1j * rng.standard_normal((3, train.samples)))
    g = larmor.vjp(train, tissue, w.astype(np.complex64))
    assert g.events.shape == (train.events, 3) and g.flip_deg.shape == train.flip_deg.shape
    flips = train.flip_deg
    u = rng.standard_normal(flips.size)
    # 0.5 degree: truncation (h in rad)^2 / 6 ~ 1e-5 relative; float32 rounding of the loss
    # (~1e-6 absolute) over 2h ~ 1e-6 per degree against a directional derivative ~1e-2.
    h = 0.5
    difference = (loss(train.with_flip_deg(flips + h * u), tissue, w)
                  - loss(train.with_flip_deg(flips - h * u), tissue, w)) / (2 * h)
    assert abs(difference) > 1e-3
    assert g.flip_deg @ u == pytest.approx(difference, rel=1e-3)
    # Each pulse alone (the excitation and two refocusing pulses).
    for p in (0, 1, 5):
        e = np.zeros(flips.size)
        e[p] = 1.0
        one = (loss(train.with_flip_deg(flips + h * e), tissue, w)
               - loss(train.with_flip_deg(flips - h * e), tissue, w)) / (2 * h)
        assert g.flip_deg[p] == pytest.approx(one, rel=1e-3, abs=1e-3 * np.abs(g.flip_deg).max())


def test_forward_over_reverse_matches_a_difference_of_adjoints(train, rng):
    tissue = larmor.Tissue(**TISSUE)
    w = (rng.standard_normal((3, train.samples)) + 1j * rng.standard_normal((3, train.samples)))
    w = w.astype(np.complex64)
    v = np.zeros((3, 5), dtype=np.float32)
    v[:, 2] = 1.0  # along t2_ms
    h = larmor.hvp(train, tissue, v, w)
    np.testing.assert_allclose(h.tissue, larmor.vjp(train, tissue, w).tissue, rtol=1e-6, atol=1e-7)
    step = STEPS["t2_ms"]
    plus = larmor.vjp(train, shifted("t2_ms", step), w).tissue.astype(np.float64)
    minus = larmor.vjp(train, shifted("t2_ms", -step), w).tissue.astype(np.float64)
    difference = (plus - minus) / (2 * step)
    # Each adjoint carries float32 rounding of about 1e-5 of its gradient g (as above); over
    # 2h = 2 ms that is 1e-5 g per ms, against a second derivative of about g / T2 with
    # T2 >= 60 ms: at most 6e-4 of the scale. Truncation, (h / T2)^2 / 6, is below 1e-4.
    # 2e-3 leaves a factor of three over their sum.
    for k in range(5):
        scale = np.abs(difference[:, k]).max()
        np.testing.assert_allclose(h.tissue_hvp[:, k], difference[:, k], rtol=0,
                                   atol=2e-3 * scale)
