"""Dictionary matching and NLLS recover the tissue that made the signals."""
import numpy as np

import larmor


def test_dictionary_matching_finds_the_atom_that_made_each_signal():
    seq = larmor.build("mese", echoes=16, echo_spacing_ms=10.0, refocusing_deg=150.0)
    t2 = np.geomspace(20.0, 300.0, 40)
    b1 = np.linspace(0.7, 1.1, 9)
    grid = larmor.Tissue(t1_ms=1000.0, t2_ms=t2[:, None], b1=b1[None, :])
    dictionary = larmor.Dictionary(larmor.simulate(seq, grid), grid)
    assert dictionary.atoms == 360 and dictionary.properties == ["t2_ms", "b1"]
    picks = np.array([3, 77, 200, 359])
    m0 = np.array([0.5, 1.0, 2.0, 3.0]) * np.exp(1j * np.array([0.0, 0.3, -1.0, 2.0]))
    measured = larmor.simulate(seq, grid)[picks] * m0[:, None].astype(np.complex64)
    r = dictionary.match(measured)
    np.testing.assert_array_equal(r["atom"], picks)
    np.testing.assert_allclose(r["t2_ms"], grid["t2_ms"][picks], rtol=1e-6)
    np.testing.assert_allclose(r["b1"], grid["b1"][picks], rtol=1e-6)
    # M0 = <atom, s> / |atom|: the complex factor applied, to float32 rounding of 16-term sums.
    np.testing.assert_allclose(r["m0"], m0, rtol=1e-5)
    np.testing.assert_allclose(r["correlation"], 1.0, rtol=1e-5)
    # Compressed to 6 singular directions, the same atoms win.
    compressed = larmor.Dictionary(larmor.simulate(seq, grid), grid, rank=6)
    assert compressed.samples == 6
    np.testing.assert_array_equal(compressed.match(measured)["atom"], picks)


def test_nlls_recovers_t2_and_m0():
    seq = larmor.build("mese", echoes=16, echo_spacing_ms=10.0)
    truth = np.array([35.0, 70.0, 140.0])
    m0 = np.array([0.8, 1.0, 1.5])
    measured = larmor.simulate(seq, larmor.Tissue(t1_ms=1000.0, t2_ms=truth, m0=m0))
    fit = larmor.fit_nlls(seq, larmor.Tissue(t1_ms=1000.0), measured,
                          {"t2_ms": (10.0, 500.0, "log")})
    # Noise-free float32 signals: the fit's floor is the signals' rounding (~1e-7 relative),
    # amplified by the T2 condition number of a 16-echo decay (~1e2).
    np.testing.assert_allclose(fit["t2_ms"], truth, rtol=1e-4)
    np.testing.assert_allclose(fit["m0"], m0, rtol=1e-4)
    assert np.all(fit["cost"] < 1e-8)


def test_estimators_refuse_voxels_without_a_usable_signal():
    """A NaN sample or an all-zero voxel is refused naming the voxel, as the CLI refuses it,
    never matched to the first atom."""
    import pytest

    seq = larmor.build("mese", echoes=8, echo_spacing_ms=10.0)
    grid = larmor.Tissue(t1_ms=1000.0, t2_ms=np.geomspace(20.0, 300.0, 20))
    dictionary = larmor.Dictionary(larmor.simulate(seq, grid), grid)
    measured = larmor.simulate(seq, grid)[:4].copy()
    measured[2, 3] = np.nan
    with pytest.raises(ValueError, match="Dictionary.match: voxel 2 has non-finite signals"):
        dictionary.match(measured)
    measured[2, 3] = 0.0
    measured[1] = 0.0
    with pytest.raises(ValueError, match=r"voxel 1 has all-zero signals \(1 such voxel"):
        dictionary.match(measured)
    with pytest.raises(ValueError, match="fit_nlls: voxel 1 has all-zero signals"):
        larmor.fit_nlls(seq, larmor.Tissue(t1_ms=1000.0), measured, {"t2_ms": (10.0, 500.0)})
