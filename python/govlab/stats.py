"""The statistics of MMTests' compare tables, and the significance test (used by the analyse stage).

Every function takes a sequence of numbers (the repeated runs of one
configuration at one parameter value) and returns a float; an undefined
figure is ``nan``, never an exception, so a table can always be printed.

==========  ============================================================
Amean       arithmetic mean
Hmean       harmonic mean, ``n / sum(1/x)``: the mean of rates (MMTests
            reports throughput this way); 0 if any value is 0, nan if any
            is negative
Gmean       geometric mean, ``exp(mean(log x))``; the same rules as Hmean
Stddev      *sample* standard deviation (divides by n - 1, as MMTests'
            ``calc_stddev``); nan for fewer than two values
CoeffVar    coefficient of variation in percent, ``100 * Stddev / Amean``
Min, Max    the extremes
==========  ============================================================

Differences against the baseline (:func:`pct_diff`) follow MMTests' sign
convention: **a positive percentage is an improvement**. For a metric where
higher is better (``pdiff``) it is ``(new - base) / base * 100``; where lower
is better (``pndiff``: latency, time, energy, and the spread statistics Stddev
and CoeffVar of any metric) it is ``(base - new) / base * 100``.

Significance (:func:`welch`, :func:`significant`): Welch's unequal-variance
two-sample t-test, two-sided, at ``p < 0.05`` (:data:`ALPHA`), on the per-run
values of the configuration against those of the baseline. It needs at least
two runs on each side. When both sides have zero variance (a deterministic
simulation repeats a value exactly when the seed does not reach the workload)
the t statistic is not defined: the test gives no verdict (``no_variance``,
never significant), and the tables say "no variance" rather than guess. A
zero difference is never significant.

``govlab reproduce`` judges the x86 frequency-invariance evaluation's cells by
the test its source's tool applied instead (:func:`mmtests_ttest`): the
t-test compare-mmtests used to mark a result significant when the source was
written, at its level of 0.10 (:data:`MMTESTS_LEVEL`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "ALPHA",
    "amean",
    "hmean",
    "gmean",
    "stddev",
    "coeffvar",
    "minimum",
    "maximum",
    "pct_diff",
    "ratio",
    "Welch",
    "welch",
    "significant",
    "MMTESTS_LEVEL",
    "MMTestsTTest",
    "mmtests_ttest",
    "mmtests_ttest_of",
    "summarise",
    "Summary",
]

#: Two-sided significance level of :func:`significant` (Welch's t-test).
ALPHA = 0.05

_NAN = float("nan")


def _values(xs: Iterable[float]) -> list[float]:
    return [float(x) for x in xs]


def amean(xs: Iterable[float]) -> float:
    """Arithmetic mean; nan for no values."""
    v = _values(xs)
    return math.fsum(v) / len(v) if v else _NAN


def hmean(xs: Iterable[float]) -> float:
    """Harmonic mean ``n / sum(1/x)``: 0 if a value is 0, nan if one is negative or none given."""
    v = _values(xs)
    if not v or any(x < 0 for x in v):
        return _NAN
    if any(x == 0 for x in v):
        return 0.0
    return len(v) / math.fsum(1.0 / x for x in v)


def gmean(xs: Iterable[float]) -> float:
    """Geometric mean ``exp(mean(log x))``: 0 if a value is 0, nan if one is negative or none given."""
    v = _values(xs)
    if not v or any(x < 0 for x in v):
        return _NAN
    if any(x == 0 for x in v):
        return 0.0
    return math.exp(math.fsum(math.log(x) for x in v) / len(v))


def stddev(xs: Iterable[float]) -> float:
    """Sample standard deviation (n - 1 in the denominator, as MMTests); nan below two values."""
    v = _values(xs)
    if len(v) < 2:
        return _NAN
    m = math.fsum(v) / len(v)
    return math.sqrt(math.fsum((x - m) ** 2 for x in v) / (len(v) - 1))


def coeffvar(xs: Iterable[float]) -> float:
    """Coefficient of variation in percent, ``100 * stddev / amean``; nan when the mean is 0."""
    v = _values(xs)
    m = amean(v)
    if not v or m == 0 or math.isnan(m):
        return _NAN
    return 100.0 * stddev(v) / abs(m)


def minimum(xs: Iterable[float]) -> float:
    v = _values(xs)
    return min(v) if v else _NAN


def maximum(xs: Iterable[float]) -> float:
    v = _values(xs)
    return max(v) if v else _NAN


def pct_diff(new: float, base: float, better: str) -> float:
    """The difference of ``new`` against ``base`` in percent, positive = improvement.

    ``better`` is ``"higher"`` (MMTests' pdiff: ``(new - base) / base * 100``)
    or ``"lower"`` (pndiff: ``(base - new) / base * 100``). Equal values give
    0 (also when both are 0); a zero baseline with a different new value gives
    ``+inf`` or ``-inf``, in the direction of the change; nan in gives nan.
    """
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    if math.isnan(new) or math.isnan(base):
        return _NAN
    if new == base:
        return 0.0
    change = (new - base) if better == "higher" else (base - new)
    if base == 0:
        return math.copysign(math.inf, change)
    return 100.0 * change / abs(base)


def ratio(new: float, base: float, better: str) -> float:
    """``new / base`` oriented so that above 1 is better: ``base / new`` when lower is better."""
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', not {better!r}")
    num, den = (new, base) if better == "higher" else (base, new)
    if math.isnan(num) or math.isnan(den):
        return _NAN
    if den == 0:
        return 1.0 if num == 0 else math.inf
    return num / den


@dataclass(frozen=True)
class Welch:
    """The outcome of Welch's t-test: statistic, degrees of freedom, two-sided p-value.

    All three are nan when the test could not be made: fewer than two runs on a
    side, or no variance on either side (``no_variance``: t is undefined).
    """

    t: float
    df: float
    p: float
    no_variance: bool = False

    @property
    def significant(self) -> bool:
        """``p < ALPHA`` (nan, and so no variance, is not significant)."""
        return not math.isnan(self.p) and self.p < ALPHA


def welch(a: Sequence[float], b: Sequence[float]) -> Welch:
    """Welch's unequal-variance t-test of ``a`` against ``b``, two-sided."""
    a, b = _values(a), _values(b)
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return Welch(_NAN, _NAN, _NAN)
    ma, mb = amean(a), amean(b)
    va, vb = stddev(a) ** 2 / na, stddev(b) ** 2 / nb
    se2 = va + vb
    if se2 == 0:
        return Welch(_NAN, _NAN, _NAN, no_variance=True)
    if ma == mb:
        return Welch(0.0, _NAN, 1.0)
    t = (ma - mb) / math.sqrt(se2)
    df = se2**2 / ((va**2 / (na - 1) if va else 0.0) + (vb**2 / (nb - 1) if vb else 0.0))
    p = float(2.0 * _student_t_sf(abs(t), df))
    return Welch(t, df, min(p, 1.0))


def significant(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether ``a`` and ``b`` differ by Welch's t-test at ``p < ALPHA`` (0.05)."""
    return welch(a, b).significant


#: compare-mmtests' significance level: Summarise.pm's default ``_SignificanceLevel``
#: (no benchmark module set another; github.com/gormanm/mmtests, f0b33946 to 8cd087ae).
MMTESTS_LEVEL = 0.10


@dataclass(frozen=True)
class MMTestsTTest:
    """The outcome of :func:`mmtests_ttest`: statistic, degrees of freedom, two-sided p-value."""

    t: float
    df: float
    p: float

    @property
    def significant(self) -> bool:
        return self.p < MMTESTS_LEVEL


def mmtests_ttest(new: Sequence[float], base: Sequence[float]) -> MMTestsTTest:
    """compare-mmtests' test of ``new`` against ``base``, as MMTests marked significance from
    2018 (f0b33946, "compare: Add support for results significance detection") until 2024
    (8cd087ae replaced it by confidence intervals), so when the x86 frequency-invariance
    evaluation (v5.7, 2020) was run: bin/lib/MMTests/Compare.pm ``_significanceTest`` on the
    mean, sample standard deviation and count of each side (Summarise.pm ``extractSummary``).

    Its t is Welch's (the standard error ``sqrt(s1²/n1 + s2²/n2)``) but its degrees of
    freedom are the pooled test's, ``n1 + n2 - 2``; the p-value is two-sided and the
    difference significant below :data:`MMTESTS_LEVEL`. A side of one value has the
    standard deviation 0 (MMTests pushes 0 for its NaN), and with no spread on either side
    any difference is significant (p 0) and none is not (p 1), as Compare.pm decides.
    """
    a, b = _values(new), _values(base)
    if not a or not b:
        return MMTestsTTest(_NAN, _NAN, _NAN)
    na, nb = len(a), len(b)
    sa, sb = (stddev(x) if len(x) > 1 else 0.0 for x in (a, b))
    return mmtests_ttest_of(amean(a) - amean(b), math.sqrt(sa**2 / na + sb**2 / nb), float(na + nb - 2))


def mmtests_ttest_of(delta: float, se: float, df: float) -> MMTestsTTest:
    """:func:`mmtests_ttest` from a difference of two estimates, its standard error and the
    degrees of freedom (for estimates that are not one sample's mean)."""
    if math.isnan(delta) or math.isnan(se):
        return MMTestsTTest(_NAN, _NAN, _NAN)
    if se == 0:
        return MMTestsTTest(_NAN, _NAN, 0.0 if delta else 1.0)
    t = delta / se
    if df < 1:
        return MMTestsTTest(t, df, _NAN)
    return MMTestsTTest(t, df, min(1.0, float(2.0 * _student_t_sf(abs(t), df))))


def _student_t_sf(x: float, df: float) -> float:
    """Student's t survival function: what ``scipy.stats.t.sf(x, df)`` computes (its ``_sf`` is
    ``stdtr(df, -x)``), from scipy.special, which imports in a third of scipy.stats' time;
    imported here: only tables need it."""
    from scipy.special import stdtr

    return float(stdtr(df, -x))


@dataclass(frozen=True)
class Summary:
    """Every statistic of one sample, as the rows of a compare table."""

    n: int
    amean: float
    hmean: float
    gmean: float
    stddev: float
    coeffvar: float
    min: float
    max: float


def summarise(xs: Iterable[float]) -> Summary:
    """All of the above for one sample."""
    v = _values(xs)
    return Summary(
        n=len(v),
        amean=amean(v),
        hmean=hmean(v),
        gmean=gmean(v),
        stddev=stddev(v),
        coeffvar=coeffvar(v),
        min=minimum(v),
        max=maximum(v),
    )
