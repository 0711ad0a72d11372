"""Governors written in Python: prototype an idea without touching the engine.

A cpufreq governor subclasses :class:`CpufreqGovernor`, a cpuidle governor
:class:`CpuidleGovernor`; the engine calls their methods as it calls its own
governors' (``crates/govlab-core/src/cpufreq/mod.rs`` and
``cpuidle/mod.rs``). Tunables are :class:`Tunable` class attributes::

    from govlab.governors import CpufreqGovernor, Tunable

    class Half(CpufreqGovernor):
        \"\"\"A share of the top frequency, always.\"\"\"
        share = Tunable(50, "percent of policy->max", min=1, max=100)

        def start(self, policy):
            return max(policy.min_khz, policy.max_khz * self.share // 100)

Use one wherever a governor goes:

* ``govlab run --cpufreq py:path/to/file.py:Half:share=30`` (and ``--cpuidle``),
* experiment files: ``cpufreq = "py:governors.py:Half:share=30"`` (a path
  relative to the experiment file),
* ``govlab.run(cpufreq=Half)``, ``govlab.run(cpufreq=Half(share=30))``, or
  ``govlab.run(cpufreq="py:file.py:Half")``.

``govlab list governors --py FILE.py[:Class]`` lists its tunables like the
built-in ones'. ``docs/write-a-governor.md`` walks from a prototype to a
Rust governor.

**cpufreq.** ``init(platform)`` once when the run is built; ``start(policy)``
when the governor takes a policy over; ``update(policy, cpu, time_ns, util,
max, flags)`` from the scheduler's utilisation hook (installed only if the
class defines ``update``); ``update_rejected(policy, cpu, time_ns, flags)``,
if the class defines it, for a hook call from another CPU that the kernel
turns away after the governor's bookkeeping (it returns None);
``timer(policy, time_ns)`` when the timer armed
with ``policy.arm_timer(delay_ns, deferrable=True)`` fires. The others return a
frequency in kHz (requested with RELATION_L; ``policy.set_target(khz, "H")``
for another relation), an :class:`HwpRequest`, or None for no change. A
frequency outside the policy limits is an error.

**HWP.** A class with ``driver = "intel_pstate"`` replaces intel_pstate's
active-mode governor (a *setpolicy* driver: its governor lives inside it).
On a platform with HWP on, its policies take HWP requests and only those:
``policy.hwp`` then holds the CPUs' capabilities (:class:`HwpCaps`:
``lowest_perf``, ``guaranteed_perf``, ``highest_perf`` and
``khz_per_perf``), and a call returns ``HwpRequest(min_perf, max_perf,
desired_perf=0, epp=128)``. Levels are MSR_HWP_REQUEST's performance levels
(P-state ratios, ``khz_per_perf`` = 100 MHz each), within the policy limits
(``policy.min_khz // khz_per_perf`` to ``policy.max_khz // khz_per_perf``);
``desired_perf`` 0 lets the hardware choose; ``epp`` runs from 0
(performance) to 255 (energy), named in :data:`EPP_NAMES`. Without HWP (or
on another driver) ``policy.hwp`` is None and the policy takes frequencies:
intel_pstate's P-states without HWP, or the generic governors' targets.

**cpuidle.** ``init(platform)``; ``enable(dev)`` once per CPU; ``select(dev,
next_timer_ns, latency_req_ns, tick_stopped)`` returns a state index (the
tick is then stopped, the idle loop's default) or ``(state, stop_tick)``;
``reflect(dev, state, measured_ns)`` is told what happened.
``next_timer_ns`` and ``latency_req_ns`` are :data:`NO_LIMIT` when there is
no timer or no limit.

**The views** (built in Rust, read-only): ``policy`` (``id``, ``cpus``,
``opps`` in kHz, ``cur_khz``, ``min_khz``, ``max_khz``,
``cpuinfo_min_khz``, ``cpuinfo_max_khz``, ``transition_latency_ns``,
``tick_ns``, ``hwp``; ``util(cpu)``, ``capacity(cpu)``, ``idle_ns(cpu, now_ns)``,
``iowait_ns(cpu, now_ns)``, ``nr_running(cpu)``, ``idle_calls(cpu)``),
``dev`` (``cpu``, ``states`` with ``exit_latency_ns``,
``target_residency_ns``, ``polling``, ...; ``disabled``, and at select
``now_ns``, ``delta_tick_ns``, ``tick_ns``, ``nr_iowait``, ``util``,
``capacity``; at reflect ``poll_time_limit``, ``got_tick``) and
``platform`` (``name``, ``driver``, ``hwp``, ``acpi_pm_profile``, ``hz``,
``tick_ns``, ``nr_cpus``, ``policies``). One object per policy or CPU is reused for the
whole run; keep what you need in your own attributes.

**Errors.** An exception in a governor method, a wrong return type or a
value the engine cannot apply stops the run with :class:`GovernorError`,
naming the governor, the call and the simulated time, with the traceback of
the governor's own code.

**Settings.** A subclass that defines ``__init__`` takes ``**settings`` and
passes them to ``super().__init__(**settings)``, which checks and sets them.

**Determinism.** A class (or a ``py:`` spec) gives a fresh instance per run.
An instance passed to :func:`govlab.run` is used as it is: state it keeps
from an earlier run carries over.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import math
import os
import re
import sys
from collections.abc import Mapping
from typing import Any, ClassVar

from govlab._core import EPP_NAMES as _EPP_NAMES
from govlab._core import HwpCaps, HwpRequest, IdleDevice, IdleState, Platform, Policy, PolicyInfo
from govlab import fmt
from govlab.exceptions import (
    FileFormatError,
    GovernorError,
    InvalidValueError,
    UnknownKeyError,
    UnknownNameError,
)

__all__ = [
    "Tunable",
    "CpufreqGovernor",
    "CpuidleGovernor",
    "Platform",
    "PolicyInfo",
    "Policy",
    "HwpRequest",
    "HwpCaps",
    "EPP_NAMES",
    "IdleDevice",
    "IdleState",
    "GovernorError",
    "NO_LIMIT",
    "SCHED_CPUFREQ_IOWAIT",
    "SCHED_CPUFREQ_MIGRATION",
    "SCHED_CAPACITY_SCALE",
    "is_py_spec",
    "resolve",
    "load_class",
    "describe",
    "identity",
]

#: ``next_timer_ns`` with no timer armed, ``latency_req_ns`` with no limit (u64::MAX).
NO_LIMIT = 2**64 - 1
#: ``update()``'s flag: the enqueued task waited for IO.
SCHED_CPUFREQ_IOWAIT = 1
#: ``update()``'s flag: a task was attached after migrating (v4.x kernels; see
#: crates/govlab-core/src/cpufreq/mod.rs).
SCHED_CPUFREQ_MIGRATION = 2
#: Capacity of the biggest CPU; utilisation runs 0..capacity.
SCHED_CAPACITY_SCALE = 1024
#: EPP values by the names intel_pstate's energy_performance_preference file
#: accepts: performance 0, balance_performance 128, balance_power 192, power 255.
EPP_NAMES: dict[str, int] = dict(_EPP_NAMES)

_BOOL_WORDS = {"1": True, "on": True, "true": True, "yes": True, "0": False, "off": False, "false": False, "no": False}


class Tunable:
    """A governor setting: its default, a line of help, and what it accepts.

    ``type`` is taken from the default (bool, int, float or str) unless
    given; a default of None means "decided in ``init`` from the machine"
    (say how in ``default_text``). ``min``/``max`` bound numbers: a value
    outside is rejected, or with ``clamp=True`` brought inside, as the
    kernel's sysfs store functions do. ``choices`` lists the allowed words.
    """

    def __init__(
        self,
        default: Any,
        help: str = "",  # noqa: A002 - the name `govlab list` shows
        *,
        type: type | None = None,  # noqa: A002
        min: float | None = None,  # noqa: A002
        max: float | None = None,  # noqa: A002
        clamp: bool = False,
        choices: tuple[str, ...] | None = None,
        default_text: str | None = None,
    ) -> None:
        if type is None:
            if default is None:
                raise TypeError("a Tunable with default None needs type=")
            type = bool if isinstance(default, bool) else default.__class__
        if type not in (bool, int, float, str):
            raise TypeError(f"a Tunable is a bool, int, float or str, not {type.__name__}")
        self.default, self.help, self.type = default, help, type
        self.min, self.max, self.clamp, self.choices = min, max, clamp, choices
        self.default_text = default_text
        self.name = "?"
        self.owner = "?"

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    # Only __get__: a governor's value lives in its instance dict, where a read finds it without
    # a call (a hook reads its tunables on every call); _Governor.__setattr__ checks what is set.
    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        return self.default

    def shown_default(self) -> str:
        return self.default_text if self.default_text is not None else self.text(self.default)

    def text(self, value: Any) -> str:
        """The value as ``--show-config`` prints it."""
        if value is None:
            return self.default_text or "None"
        if self.type is bool:
            return "on" if value else "off"
        return str(value)

    def expected(self) -> str:
        default = f"default {self.shown_default()}"
        if self.choices:
            return f"one of {', '.join(self.choices)} ({default})"
        if self.type is bool:
            return f"on/off, true/false or 1/0 ({default})"
        if self.type is str:
            return f"text ({default})"
        kind = "an integer" if self.type is int else "a number"
        lo, hi = self.min, self.max
        if self.clamp:
            lo, hi = (lo if lo is not None else -math.inf), math.inf
        if lo is not None and hi not in (None, math.inf):
            return f"{kind} from {lo} to {hi} ({default})"
        if lo is not None and lo != -math.inf:
            return f"{kind} of at least {lo} ({default})"
        if hi not in (None, math.inf):
            return f"{kind} of at most {hi} ({default})"
        return f"{kind} ({default})"

    def parse(self, text: str, owner: str) -> Any:
        """A value from spec text (``k=v``)."""
        t = text.strip()
        try:
            if self.type is bool:
                return self.check(_BOOL_WORDS[t.lower()], owner)
            if self.type is int:
                return self.check(int(t, 10), owner)
            if self.type is float:
                return self.check(float(t), owner)
        except (KeyError, ValueError):
            raise self._bad(text, owner) from None
        return self.check(t, owner)

    def check(self, value: Any, owner: str) -> Any:
        """``value`` if this tunable accepts it (clamped if so declared)."""
        if value is None and self.default is None:
            return None
        if self.type is bool:
            if not isinstance(value, bool):
                raise self._bad(value, owner)
            return value
        if self.type is str:
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                raise self._bad(value, owner)
            return value
        ok_types = (int,) if self.type is int else (int, float)
        if isinstance(value, bool) or not isinstance(value, ok_types) or not math.isfinite(value):
            raise self._bad(value, owner)
        if self.min is not None and value < self.min:
            raise self._bad(value, owner)
        if self.max is not None and value > self.max:
            if not self.clamp:
                raise self._bad(value, owner)
            value = self.max
        return self.type(value)

    def _bad(self, value: Any, owner: str) -> InvalidValueError:
        return InvalidValueError(f"{owner}: invalid value '{value}' for '{self.name}': {self.expected()}")


class _Governor:
    """What both kinds share: tunables, their text, the hooks' defaults."""

    kind: ClassVar[str] = ""
    #: One line for ``govlab list governors`` (default: the docstring's first line).
    description: ClassVar[str] = ""
    #: The kernel behaviour (and version) the governor follows, if any.
    models: ClassVar[str] = ""
    #: How messages and results name this governor; set by govlab per run.
    spec_name: str | None = None

    def __init__(self, **settings: Any) -> None:
        known = self.tunables()
        for key, value in settings.items():
            if key not in known:
                raise _unknown_key(_owner(self), key, known)
            setattr(self, key, value)
        # Every tunable's value into the instance's own attributes, its default
        # included, so that reading one in a hook is a plain attribute read,
        # not a call of Tunable.__get__ (unless the class hides the tunable).
        # getattr(self, key) is the value set so far (by the settings above,
        # or by a subclass before this), else the default. self.__dict__ is
        # not touched: asking for it turns the instance's attributes into a
        # dict for good, and Python 3.11 then reads them the slow way.
        cls = type(self)
        for key, t in known.items():
            if getattr(cls, key, None) is t:
                object.__setattr__(self, key, getattr(self, key))

    def __setattr__(self, name: str, value: Any) -> None:
        tunable = getattr(type(self), name, None)
        if isinstance(tunable, Tunable):
            value = tunable.check(value, _owner(self))
        object.__setattr__(self, name, value)

    @classmethod
    def tunables(cls) -> dict[str, Tunable]:
        """The class's tunables by name, in the order they are declared."""
        out: dict[str, Tunable] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Tunable):
                    out[name] = value
        return out

    @classmethod
    def from_settings(cls, settings: Mapping[str, str], owner: str | None = None) -> _Governor:
        """An instance with spec settings (text values, as in ``k=v``)."""
        owner = owner or f"{cls.kind} governor {_class_label(cls)}"
        known = cls.tunables()
        values = {}
        for key, text in settings.items():
            if key not in known:
                raise _unknown_key(owner, key, known)
            values[key] = known[key].parse(text, owner)
        gov = cls(**values)
        gov.spec_name = owner.split(" governor ", 1)[-1]
        return gov

    def tunable_values(self) -> list[tuple[str, str]]:
        """Every tunable and its value as text (``--show-config``)."""
        return [(name, t.text(getattr(self, name))) for name, t in self.tunables().items()]

    def settings(self) -> dict[str, Any]:
        """The tunables that differ from their defaults."""
        return {n: getattr(self, n) for n, t in self.tunables().items() if getattr(self, n) != t.default}

    def init(self, platform: Platform) -> None:
        """Once, when the run is built: resolve machine-dependent defaults here."""


class CpufreqGovernor(_Governor):
    """Base class of cpufreq governors written in Python (see the module doc)."""

    kind = "cpufreq"
    #: The driver this governor is part of: None for a generic governor (any
    #: driver that takes frequencies runs it), "intel_pstate" for one that
    #: replaces intel_pstate's active-mode governor (and may write HWP requests).
    driver: ClassVar[str | None] = None

    @property
    def uses_util_hook(self) -> bool:
        """Whether the scheduler's hook calls :meth:`update` (the class defines it)."""
        return type(self).update is not CpufreqGovernor.update

    def start(self, policy: Policy) -> int | HwpRequest | None:
        """The governor takes ``policy`` over: a frequency (kHz), an HWP request or None."""
        return None

    def update(self, policy: Policy, cpu: int, time_ns: int, util: int, max: int, flags: int) -> int | HwpRequest | None:  # noqa: A002
        """The scheduler's utilisation hook for ``cpu`` of ``policy``."""
        return None

    @property
    def sees_rejected_calls(self) -> bool:
        """Whether the hook's rejected remote calls reach :meth:`update_rejected` (the class defines it)."""
        return type(self).update_rejected is not CpufreqGovernor.update_rejected

    def update_rejected(self, policy: Policy, cpu: int, time_ns: int, flags: int) -> None:
        """A hook call for ``cpu`` made from another CPU, which the kernel turns away.

        v6.8 ``cpufreq_this_cpu_can_update()``: a policy that does not cover
        the calling CPU, on a driver that cannot switch from any CPU, changes
        nothing on such a call; but the governor has done its bookkeeping by
        then (schedutil records the IO-wait boost and ``last_update`` before
        ``sugov_should_update_freq()`` says no). Define this to keep that
        bookkeeping; it must return None (no frequency comes of it).
        """
        return None

    def timer(self, policy: Policy, time_ns: int) -> int | HwpRequest | None:
        """The timer armed with ``policy.arm_timer`` fired."""
        return None


class CpuidleGovernor(_Governor):
    """Base class of cpuidle governors written in Python (see the module doc)."""

    kind = "cpuidle"

    def enable(self, dev: IdleDevice) -> None:
        """Set up the state of ``dev.cpu``; once per CPU, before any select."""

    def select(self, dev: IdleDevice, next_timer_ns: int, latency_req_ns: int, tick_stopped: bool) -> int | tuple[int, bool]:
        """The state to enter, or ``(state, stop_tick)``."""
        raise NotImplementedError(f"{type(self).__name__} must define select()")

    def reflect(self, dev: IdleDevice, state: int, measured_ns: int) -> None:
        """After the wakeup: ``state`` was entered for ``measured_ns`` (exit latency included)."""


# --- specs ----------------------------------------------------------------------

_PY_SPEC = re.compile(r"^py:(?P<path>.+?\.py):(?P<cls>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<settings>.*))?$", re.S)

_KINDS = {"cpufreq": CpufreqGovernor, "cpuidle": CpuidleGovernor}


def is_py_spec(spec: Any) -> bool:
    """Whether ``spec`` names a governor written in Python (a ``py:`` spec, a class or an instance)."""
    if isinstance(spec, (tuple, list)) and spec:
        spec = spec[0]
    elif isinstance(spec, Mapping):
        spec = spec.get("name")
    if isinstance(spec, str):
        return spec.strip().startswith("py:")
    return isinstance(spec, _Governor) or (isinstance(spec, type) and issubclass(spec, _Governor))


def split_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``py:PATH.py:Class[:k=v,...]`` as (path, class name, settings)."""
    m = _PY_SPEC.match(spec.strip())
    if not m:
        raise InvalidValueError(
            f"invalid governor spec '{spec}': a Python governor is written py:PATH.py:CLASS[:key=value,...]"
        )
    settings: dict[str, str] = {}
    for item in filter(None, (s.strip() for s in (m.group("settings") or "").split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InvalidValueError(f"{spec}: '{item}': settings are written key=value, separated by commas")
        settings[key.strip()] = value.strip()
    return m.group("path"), m.group("cls"), settings


def join_spec(path: str, cls: str, settings: Mapping[str, Any]) -> str:
    """The spec text of a file's class with settings."""
    text = f"py:{path}:{cls}"
    if settings:
        text += ":" + ",".join(f"{k}={_value_text(v)}" for k, v in settings.items())
    return text


def resolve(spec: Any, kind: str) -> tuple[str, _Governor] | None:
    """For a Python governor, ``(name, instance)`` for the engine; None for a built-in name.

    ``spec`` is a ``py:`` spec string, a class, an instance, or one of those
    in a ``(spec, {settings})`` pair or ``{"name": spec, ...}`` dict.
    """
    base = _KINDS[kind]
    settings: dict[str, Any] = {}
    if isinstance(spec, (tuple, list)) and len(spec) in (1, 2) and is_py_spec(spec[0]):
        spec, settings = spec[0], dict(spec[1] or {}) if len(spec) == 2 else {}
    elif isinstance(spec, Mapping) and is_py_spec(spec.get("name")):
        settings = {k: v for k, v in spec.items() if k != "name"}
        spec = spec["name"]
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, str):
        if not spec.strip().startswith("py:"):
            return None
        path, cls_name, text_settings = split_spec(spec)
        text_settings.update({k: _value_text(v) for k, v in settings.items()})
        cls = load_class(path, cls_name, kind)
        name = join_spec(path, cls_name, text_settings)
        gov = cls.from_settings(text_settings, f"{kind} governor {name}")
        return name, gov
    if isinstance(spec, type) and issubclass(spec, _Governor):
        _check_kind(spec, kind, _class_label(spec))
        gov = spec(**settings)
        return _instance_name(gov, settings), gov
    if isinstance(spec, _Governor):
        _check_kind(type(spec), kind, _class_label(type(spec)))
        if settings:
            raise InvalidValueError(f"{kind} governor {_class_label(type(spec))}: give settings to the class, not with an instance")
        return spec.spec_name or _instance_name(spec, spec.settings()), spec
    if isinstance(spec, type) or (not isinstance(spec, (str, Mapping, tuple, list)) and spec is not None):
        raise InvalidValueError(
            f"{kind}: {fmt.clip(repr(spec))} is not a governor; a Python {kind} governor is a subclass of govlab.governors.{base.__name__}"
        )
    return None


def _instance_name(gov: _Governor, settings: Mapping[str, Any]) -> str:
    name = f"py:{_class_label(type(gov))}"
    if settings:
        name += ":" + ",".join(f"{k}={_value_text(v)}" for k, v in settings.items())
    return name


def _check_kind(cls: type, kind: str, label: str) -> None:
    base = _KINDS[kind]
    if not issubclass(cls, base):
        other = "cpuidle" if kind == "cpufreq" else "cpufreq"
        raise InvalidValueError(f"--{kind}: {label} is a {other} governor, not a {kind} governor")


# --- files ----------------------------------------------------------------------

_MODULES: dict[tuple[str, str], Any] = {}


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_module(path: str) -> Any:
    """The module in ``path``, imported once per content (an edited file is imported again)."""
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        if os.path.exists(full):
            raise FileFormatError(f"{path}: not a regular file (a directory, FIFO or device); a governor is a Python file")
        raise FileNotFoundError(f"{path}: no such governor file")
    digest = file_sha256(full)
    key = (full, digest)
    if key in _MODULES:
        return _MODULES[key]
    name = f"govlab_user_{digest[:16]}"
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:
        raise FileFormatError(f"{path}: cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        del sys.modules[name]
        raise FileFormatError(f"{e.filename or path}:{e.lineno}: {e.msg}") from None
    except SystemExit as e:
        # sys.exit() (or exit()) at import would end govlab without a word.
        del sys.modules[name]
        raise FileFormatError(f"{path}: importing it called sys.exit({fmt.clip(repr(e.code), 60)}); a governor file may not exit") from None
    except Exception as e:
        del sys.modules[name]
        raise FileFormatError(f"{path}: importing it raised {_exception_text(e)}") from None
    _MODULES[key] = module
    return module


def governor_classes(module: Any) -> list[type]:
    """The governor classes a module defines (not the ones it imports)."""
    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, _Governor) and obj.__module__ == module.__name__
        and obj not in (CpufreqGovernor, CpuidleGovernor)
    ]


def load_class(path: str, cls_name: str, kind: str | None = None) -> type:
    """Class ``cls_name`` of the governor file ``path``, checked to be a governor (of ``kind``)."""
    module = load_module(path)
    classes = governor_classes(module)
    cls = getattr(module, cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, _Governor)):
        names = ", ".join(sorted(c.__name__ for c in classes)) or "(none)"
        what = f"{kind} governor" if kind else "governor"
        raise UnknownNameError(f"unknown {what} '{cls_name}' in {path}; the governor classes there: {names}")
    if kind is not None:
        _check_kind(cls, kind, f"py:{path}:{cls_name}")
    return cls


def describe(target: str) -> list[dict[str, Any]]:
    """``govlab list governors`` entries for ``FILE.py`` (every governor class) or ``FILE.py:Class``."""
    text = target[3:] if target.startswith("py:") else target
    path, colon, cls_name = text.rpartition(":") if not text.endswith(".py") else (text, "", "")
    if not colon:
        path, classes = text, governor_classes(load_module(text))
        if not classes:
            raise UnknownNameError(f"{path} defines no governor class (a subclass of govlab.governors.CpufreqGovernor or CpuidleGovernor)")
    else:
        classes = [load_class(path, cls_name)]
    return [_entry(path, cls) for cls in classes]


def _entry(path: str, cls: type) -> dict[str, Any]:
    doc = inspect.getdoc(cls) or ""
    entry: dict[str, Any] = {
        "name": f"py:{path}:{cls.__name__}",
        "kind": cls.kind,
        "description": cls.description or (doc.splitlines()[0] if doc else ""),
    }
    if cls.models:
        entry["models"] = cls.models
    entry["params"] = [{"name": n, "default": t.shown_default(), "help": t.help} for n, t in cls.tunables().items()]
    return entry


def identity(spec: str) -> dict[str, Any]:
    """What identifies a ``py:`` spec's runs: the file's sha256 (not its path), the class, the settings."""
    path, cls_name, settings = split_spec(spec)
    return {"file": "sha256:" + file_sha256(path), "class": cls_name, "params": settings}


def absolute_spec(spec: str, base_dir: str) -> str:
    """``spec`` with its file path made absolute against ``base_dir`` (if relative)."""
    path, cls_name, settings = split_spec(spec)
    if not os.path.isabs(path):
        path = os.path.normpath(os.path.join(base_dir, path))
    return join_spec(path, cls_name, settings)


# --- helpers ----------------------------------------------------------------------


def _owner(gov: Any) -> str:
    name = getattr(gov, "spec_name", None) or _class_label(type(gov))
    return f"{getattr(gov, 'kind', '')} governor {name}".strip()


def _class_label(cls: type) -> str:
    module = cls.__module__
    if module.startswith("govlab_user_"):
        return cls.__qualname__
    return f"{module}.{cls.__qualname__}"


def _unknown_key(owner: str, key: str, known: Mapping[str, Tunable]) -> UnknownKeyError:
    valid = ", ".join(known) if known else "(none: it takes no settings)"
    return UnknownKeyError(f"{owner}: unknown key '{key}'; valid keys: {valid}")


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def _exception_text(e: BaseException) -> str:
    import traceback

    return "".join(traceback.format_exception_only(e)).strip()
