"""Forward runs: closed forms, the larmor executable's numbers, zero copy, errors."""
import os
import shutil
import subprocess

import numpy as np
import pytest

import larmor


def test_mese_matches_the_cpmg_closed_form():
    # docs/physics.md: with ideal refocusing, echo n = -i M0 sin(a) exp(-n ESP / T2).
    esp_ms, echoes = 10.0, 32
    seq = larmor.build("mese", echoes=echoes, echo_spacing_ms=esp_ms, excitation_deg=90.0)
    t2 = np.array([20.0, 80.0, 300.0])
    m0 = np.array([1.0, 0.5, 2.0])
    s = larmor.simulate(seq, larmor.Tissue(t1_ms=1000.0, t2_ms=t2, m0=m0))
    n = np.arange(1, echoes + 1)
    expected = -1j * m0[:, None] * np.exp(-n[None, :] * esp_ms / t2[:, None])
    assert s.shape == (3, echoes) and s.dtype == np.complex64
    # float32 signals of magnitude <= 2: a few ulps (1.2e-7 relative) after 65 events.
    np.testing.assert_allclose(s, expected, rtol=0, atol=2e-6)


def test_deck_and_builder_agree(inputs):
    deck = larmor.read_deck(inputs / "default.toml")
    assert deck.builder == "mese" and deck.tissue.voxels == 200 * 31
    assert deck.tissue_shape == [1, 200, 31]
    built = larmor.build("mese", echoes=32, echo_spacing_ms=10.0, excitation_deg=90.0,
                         refocusing_deg=180.0)
    tissue = deck.tissue
    np.testing.assert_array_equal(larmor.simulate(deck, tissue), larmor.simulate(built, tissue))
    # The grid's last property (b1) varies fastest; t2_ms is log-spaced from 10 to 2000 ms.
    np.testing.assert_allclose(tissue["b1"][:31], np.linspace(0.5, 1.2, 31), rtol=1e-6)
    np.testing.assert_allclose(tissue["t2_ms"][::31], np.geomspace(10.0, 2000.0, 200), rtol=1e-6)


@pytest.mark.skipif(not os.environ.get("LARMOR_EXECUTABLE") or not shutil.which("h5dump"),
                    reason="needs the larmor executable (LARMOR_EXECUTABLE) and h5dump")
def test_default_deck_matches_the_larmor_executable(inputs, tmp_path):
    out = tmp_path / "default.h5"
    subprocess.run([os.environ["LARMOR_EXECUTABLE"], "simulate", str(inputs / "default.toml"),
                    "-o", str(out)], check=True, capture_output=True)
    raw = tmp_path / "signals.bin"
    subprocess.run(["h5dump", "-d", "/signals", "-b", "LE", "-o", str(raw), str(out)],
                   check=True, capture_output=True)
    from_file = np.fromfile(raw, dtype="<f4").view(np.complex64).reshape(6200, 32)
    deck = larmor.read_deck(inputs / "default.toml")
    # The same kernels on the same voxels: identical floats.
    np.testing.assert_array_equal(larmor.simulate(deck, deck.tissue), from_file)


def test_pulseq_file_reproduces_the_deck_it_was_exported_from(inputs):
    # inputs/mese.seq is `larmor export inputs/mese.toml`: the same train through the Pulseq reader.
    seq = larmor.read_pulseq(inputs / "mese.seq")
    built = larmor.read_deck(inputs / "mese.toml").sequence
    assert seq.samples == built.samples == 32
    np.testing.assert_allclose(seq.flip_deg, built.flip_deg, rtol=1e-6)
    tissue = larmor.Tissue(t1_ms=1000.0, t2_ms=[40.0, 100.0], b1=[0.8, 1.0])
    # The file's raster rounds times to 1 us at most (1e-4 of an echo spacing): float32 level.
    np.testing.assert_allclose(larmor.simulate(seq, tissue), larmor.simulate(built, tissue),
                               rtol=0, atol=2e-6)


def test_an_event_list_built_in_python_gives_the_spin_echo():
    # 90y - tau - 180x - tau - sample: the echo refocuses off-resonance, |S| = exp(-2 tau / T2).
    tau_ms = 10.0
    seq = larmor.build("events", events=[
        dict(event="pulse", flip_deg=90.0, phase_deg=90.0, duration_ms=tau_ms),
        dict(event="pulse", flip_deg=180.0, duration_ms=tau_ms),
        dict(event="sample")])
    t2_ms = np.array([50.0, 100.0, 100.0])
    tissue = larmor.Tissue(t1_ms=1000.0, t2_ms=t2_ms, off_resonance_hz=[0.0, 7.0, -31.5])
    np.testing.assert_allclose(np.abs(larmor.simulate(seq, tissue)[:, 0]),
                               np.exp(-2 * tau_ms / t2_ms), rtol=1e-6)


def test_signals_are_written_in_place():
    seq = larmor.build("mese", echoes=4, echo_spacing_ms=10.0)
    tissue = larmor.Tissue(t1_ms=1000.0, t2_ms=[50.0, 100.0])
    s = larmor.simulate(seq, tissue)
    assert s.flags.owndata and s.flags.c_contiguous and s.base is None
    out = np.full((2, 4), np.nan, dtype=np.complex64)
    result = larmor.simulate(seq, tissue, out=out)
    assert result is out
    np.testing.assert_array_equal(out, s)  # every element was written
    with pytest.raises(ValueError, match="out must be complex64"):
        larmor.simulate(seq, tissue, out=np.zeros((2, 4), dtype=np.complex128))
    with pytest.raises(ValueError, match=r"out must have shape \(2, 4\)"):
        larmor.simulate(seq, tissue, out=np.zeros((4, 2), dtype=np.complex64))
    with pytest.raises(ValueError, match="C-contiguous"):
        larmor.simulate(seq, tissue, out=np.zeros((4, 2), dtype=np.complex64).T)


def test_tissue_broadcasts_in_deck_units():
    t = larmor.Tissue(t1_ms=np.array([[800.0], [1200.0]]), t2_ms=[40.0, 60.0, 80.0], b1=0.9)
    assert t.voxels == 6 and sorted(t.maps) == ["t1_ms", "t2_ms"]
    np.testing.assert_allclose(t["t1_ms"], [800, 800, 800, 1200, 1200, 1200])
    np.testing.assert_allclose(t["t2_ms"], [40, 60, 80, 40, 60, 80])
    np.testing.assert_allclose(t["b1"], np.full(6, 0.9), rtol=1e-7)
    assert not t.is_map("b1")


def test_errors_carry_larmors_messages(inputs, tmp_path):
    with pytest.raises(ValueError, match=r"larmor.Tissue: t2_ms at voxel 1 is -5(\.0+)?; it must "
                                         r"be a positive number"):
        larmor.Tissue(t1_ms=1000.0, t2_ms=[50.0, -5.0])
    with pytest.raises(ValueError, match="unknown property 't3_ms'"):
        larmor.Tissue(t3_ms=1.0)
    with pytest.raises(larmor.DeckError, match="no such deck file") as caught:
        larmor.read_deck(tmp_path / "missing.toml")
    assert isinstance(caught.value, RuntimeError)
    with pytest.raises(larmor.DeckError) as caught:
        larmor.build("mese", echoes=0)
    assert str(caught.value) == "larmor.build(mese): [sequence] echoes must be an integer >= 1"
    bad = tmp_path / "bad.toml"
    bad.write_text('[sequence]\nbuilder = "mese"\nechoes = 4\nflavour = 1\n[tissue]\nt2_ms = 50.0\n')
    with pytest.raises(larmor.DeckError, match=r"bad.toml:4: \[sequence\] flavour is not a known key"):
        larmor.read_deck(bad)


def test_the_public_names_are_the_packages_own():
    modules = [larmor]
    try:
        import importlib
        modules.append(importlib.import_module("larmor.torch"))
    except ImportError:  # larmor.torch needs torch
        pass
    for module in modules:
        assert sorted(module.__all__) == sorted(set(module.__all__))
        for name in module.__all__:
            assert hasattr(module, name), f"{module.__name__}.{name}"


def test_an_interpreter_that_cannot_import_the_module_is_told_which_can():
    import sys
    # An interpreter without NumPy, imitated by a None entry in sys.modules.
    run = subprocess.run([sys.executable, "-c",
                          "import sys; sys.modules['numpy'] = None; import larmor"],
                         capture_output=True, text=True, env=os.environ)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert "larmor was built for " in last and "numpy" in last
    assert f"cannot be imported by {sys.executable}" in last
