import pytest

from worker.layout.cosine import distance_distribution, figures
from worker.layout.tables import pigeonhole, sampled


def test_the_known_table_at_cosine_0_8() -> None:
    f = figures(0.8, pigeonhole(3))
    assert f.angle_degrees == pytest.approx(36.87, abs=0.005)
    assert f.bit_agreement == pytest.approx(0.7952, abs=0.00005)
    assert f.differing_bits == pytest.approx(13.11, abs=0.005)
    assert f.equal_bits == pytest.approx(64 - 13.11, abs=0.005)
    assert f.exact_collision == pytest.approx(f.bit_agreement**64)
    assert f.exact_collision == pytest.approx(4.26e-7, rel=1e-2)


def test_identical_and_opposite_vectors() -> None:
    assert figures(1.0, pigeonhole(3)).within_threshold == pytest.approx(1.0)
    assert figures(-1.0, pigeonhole(3)).differing_bits == pytest.approx(64)


def test_distances_are_a_distribution_and_the_tables_find_what_is_within_k() -> None:
    dist = distance_distribution(0.95)
    assert sum(dist) == pytest.approx(1.0)
    exact = figures(0.95, pigeonhole(5))
    assert exact.found == pytest.approx(exact.within_threshold)  # exact tables miss nothing
    lossy = figures(0.95, sampled(5, 4, 16))
    assert lossy.found < lossy.within_threshold


def test_out_of_range_cosine_is_refused() -> None:
    with pytest.raises(ValueError, match="cosine"):
        figures(1.5, pigeonhole(3))
