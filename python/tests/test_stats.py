"""govlab.stats against figures worked out by hand (and against the 2018 HWP-boost tables)."""

from __future__ import annotations

import math

import pytest

from govlab import stats


def test_amean():
    assert stats.amean([1, 2, 3, 4]) == 2.5
    assert math.isnan(stats.amean([]))


def test_hmean_of_rates():
    # 100 and 200 transactions/s over the same work: 2 / (1/100 + 1/200) = 133.33...
    assert stats.hmean([100, 200]) == pytest.approx(400 / 3, rel=1e-15)
    # 3 / (1 + 1/2 + 1/4) = 3 / 1.75
    assert stats.hmean([1, 2, 4]) == pytest.approx(12 / 7, rel=1e-15)
    assert stats.hmean([5, 5, 5]) == pytest.approx(5)
    assert stats.hmean([0, 3]) == 0.0
    assert math.isnan(stats.hmean([-1, 3]))
    assert math.isnan(stats.hmean([]))


def test_gmean():
    assert stats.gmean([1, 2, 4]) == pytest.approx(2, rel=1e-15)
    assert stats.gmean([2, 8]) == pytest.approx(4, rel=1e-15)
    assert stats.gmean([0, 8]) == 0.0
    assert math.isnan(stats.gmean([-2, 8]))


def test_means_are_ordered():
    xs = [3.0, 7.0, 11.0, 2.5]
    assert stats.hmean(xs) < stats.gmean(xs) < stats.amean(xs)


def test_sample_stddev_divides_by_n_minus_1():
    # mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; 32 / 7
    xs = [2, 4, 4, 4, 5, 5, 7, 9]
    assert stats.stddev(xs) == pytest.approx(math.sqrt(32 / 7), rel=1e-15)
    assert stats.stddev([1, 2, 3]) == pytest.approx(1.0, rel=1e-15)
    assert stats.stddev([4, 4, 4]) == 0.0
    assert math.isnan(stats.stddev([4]))


def test_coeffvar_in_percent():
    xs = [2, 4, 4, 4, 5, 5, 7, 9]
    assert stats.coeffvar(xs) == pytest.approx(100 * math.sqrt(32 / 7) / 5, rel=1e-15)
    assert stats.coeffvar([1, 2, 3]) == pytest.approx(50.0)
    assert math.isnan(stats.coeffvar([0, 0]))


def test_min_max():
    assert (stats.minimum([3, 1, 2]), stats.maximum([3, 1, 2])) == (1, 3)
    assert math.isnan(stats.minimum([])) and math.isnan(stats.maximum([]))


# --- percentages: positive is an improvement ----------------------------------------


def test_pct_lower_is_better():
    # dbench4 latency, EXT4, 1 client (seed mail): 28.49 -> 19.68 is +30.92%
    assert stats.pct_diff(19.68, 28.49, "lower") == pytest.approx(30.92, abs=0.005)
    # hackbench 1 group: 0.8350 -> 1.1577 s is a loss (-38.6%)
    assert stats.pct_diff(1.1577, 0.8350, "lower") == pytest.approx(-38.65, abs=0.01)
    # by hand: 10 -> 8 is 20% better, 10 -> 12 is 20% worse
    assert stats.pct_diff(8, 10, "lower") == pytest.approx(20.0)
    assert stats.pct_diff(12, 10, "lower") == pytest.approx(-20.0)


def test_pct_higher_is_better():
    # sqlite insert, EXT4: Hmean 2098.79 -> 2292.16 trans/s is +9.21%
    assert stats.pct_diff(2292.16, 2098.79, "higher") == pytest.approx(9.21, abs=0.005)
    # pgbench 1 client: 2692.19 -> 2660.98 is -1.16%
    assert stats.pct_diff(2660.98, 2692.19, "higher") == pytest.approx(-1.16, abs=0.005)
    assert stats.pct_diff(12, 10, "higher") == pytest.approx(20.0)
    assert stats.pct_diff(8, 10, "higher") == pytest.approx(-20.0)


def test_pct_of_stddev_is_lower_is_better_even_for_rates():
    # sqlite Stddev 78.79 -> 95.73 is -21.50% although the metric is higher-is-better
    assert stats.pct_diff(95.73, 78.79, "lower") == pytest.approx(-21.50, abs=0.005)


def test_pct_edge_cases():
    assert stats.pct_diff(5, 5, "lower") == 0.0
    assert stats.pct_diff(0, 0, "higher") == 0.0
    assert stats.pct_diff(3, 0, "lower") == -math.inf
    assert stats.pct_diff(3, 0, "higher") == math.inf
    assert math.isnan(stats.pct_diff(math.nan, 1, "higher"))
    with pytest.raises(ValueError):
        stats.pct_diff(1, 2, "sideways")


def test_ratio_is_oriented():
    assert stats.ratio(12, 10, "higher") == pytest.approx(1.2)
    assert stats.ratio(8, 10, "lower") == pytest.approx(1.25)


# --- significance --------------------------------------------------------------------------


def test_welch_by_hand():
    # means 2 and 5, variances 1 and 1, n = 3 each:
    # se^2 = 1/3 + 1/3, t = -3 / sqrt(2/3), df = (2/3)^2 / (2 * (1/3)^2 / 2) = 4
    w = stats.welch([1, 2, 3], [4, 5, 6])
    assert w.t == pytest.approx(-3 / math.sqrt(2 / 3), rel=1e-12)
    assert w.df == pytest.approx(4.0, rel=1e-12)
    # two-sided p of t = 3.674 with 4 degrees of freedom
    assert w.p == pytest.approx(0.021312, abs=1e-5)
    assert w.significant


def test_welch_matches_scipy_with_unequal_variances():
    from scipy.stats import ttest_ind

    a, b = [10.1, 11.3, 9.8, 10.6], [12.0, 14.5, 11.1, 15.2, 13.3]
    w = stats.welch(a, b)
    ref = ttest_ind(a, b, equal_var=False)
    assert w.t == pytest.approx(ref.statistic, rel=1e-12)
    assert w.p == pytest.approx(ref.pvalue, rel=1e-9)


def test_student_t_tail_is_scipy_stats_to_the_bit():
    # stats takes the tail from scipy.special (a faster import); the p-values must not move
    from scipy.stats import t as student_t

    for x in (0.0, 0.3, 1.0, 2.7, 12.5, 400.0, math.inf):
        for df in (1.0, 2.5, 4.0, 8.0, 37.3, 1e6):
            want = float(2.0 * student_t.sf(x, df))
            assert 2.0 * stats._student_t_sf(x, df) == want, (x, df)
    assert math.isnan(stats._student_t_sf(math.nan, 4.0))


def test_not_significant_above_alpha():
    w = stats.welch([1, 2, 3], [1.5, 2.5, 3.5])
    assert w.p > stats.ALPHA and not w.significant
    assert not stats.significant([1, 2, 3], [1.5, 2.5, 3.5])


def test_welch_needs_two_runs_a_side():
    w = stats.welch([1], [2, 3])
    assert math.isnan(w.p) and not w.significant


def test_welch_without_variance_gives_no_verdict():
    # issue 16: identical repeats on both sides were "significant" when the means
    # differed (and make demo marked 248.63 vs 248.63 *0.00%*); t is undefined.
    for a, b in (([4, 4, 4], [4, 4]), ([4, 4, 4], [5, 5])):
        w = stats.welch(a, b)
        assert w.no_variance and not w.significant and math.isnan(w.p)
    w = stats.welch([4, 5, 6], [5, 5])
    assert not w.no_variance and not math.isnan(w.p)
    assert stats.ALPHA == 0.05


def test_summarise():
    s = stats.summarise([1, 2, 4])
    assert s.n == 3
    assert (s.amean, s.min, s.max) == (pytest.approx(7 / 3), 1, 4)
    assert s.gmean == pytest.approx(2)
    assert s.hmean == pytest.approx(12 / 7)


# --- compare-mmtests' test (the reproduce verdicts of the x86 evaluation) --------------------


def test_mmtests_ttest_by_hand():
    # means 2 and 5, s 1 and 1, n 3 each: t = -3 / sqrt(2/3), df = 3 + 3 - 2
    t = stats.mmtests_ttest([1, 2, 3], [4, 5, 6])
    assert t.t == pytest.approx(-3 / math.sqrt(2 / 3), rel=1e-12)
    assert t.df == 4.0
    assert t.p == pytest.approx(0.021312, abs=1e-5)
    assert t.significant


def test_mmtests_ttest_takes_the_pooled_degrees_of_freedom():
    # unequal variances: Welch's df is 5.4, MMTests takes n1 + n2 - 2
    a, b = [10.1, 11.3, 9.8, 10.6], [12.0, 14.5, 11.1, 15.2, 13.3]
    assert stats.mmtests_ttest(a, b).df == 7.0
    assert stats.welch(a, b).df == pytest.approx(5.38, abs=0.01)


def test_mmtests_ttest_is_significant_below_ten_percent():
    # t = -1.9 / sqrt(2/3) = -2.33 with 4 degrees of freedom: p 0.08, significant at MMTests'
    # 0.10 and not at the compare tables' 0.05
    t = stats.mmtests_ttest([1, 2, 3], [2.9, 3.9, 4.9])
    assert t.p == pytest.approx(0.0806, abs=5e-4)
    assert t.significant and not stats.welch([1, 2, 3], [2.9, 3.9, 4.9]).significant
    assert not stats.mmtests_ttest([1, 2, 3], [1.5, 2.5, 3.5]).significant


@pytest.mark.parametrize(
    ("new", "base", "p"),
    [([1.0], [2.0], 0.0), ([1.0], [1.0], 1.0), ([2.0, 2.0, 2.0], [3.0, 3.0, 3.0], 0.0), ([2.0, 2.0], [2.0, 2.0], 1.0)],
)
def test_mmtests_ttest_without_spread_calls_any_difference_significant(new, base, p):
    # Compare.pm: "If there is a difference in means then there's 0% probability of $delta
    # being described by our model"; one value a side has the standard deviation 0
    t = stats.mmtests_ttest(new, base)
    assert t.p == p and t.significant is (p == 0.0)
