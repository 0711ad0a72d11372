//! A cpufreq governor written in Python, on [`CpufreqGovernor`].

use govlab_core::cpufreq::{CpufreqGovernor, Policy, SchedView};
use govlab_core::external::{self, CpufreqAnswer, CpufreqFactory, CpufreqRequests};
use govlab_core::Error;
use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::hwp::{HwpCapsView, HwpRequestPy};
use super::{init, int_of, intern, method, shown, tuple, Who};

/// A policy as a Python governor sees it: its fixed data, its current
/// frequency and limits, the scheduler's figures for any CPU, and the
/// requests a governor may make besides returning a frequency.
///
/// One object per policy for the whole run, refreshed before each call. The
/// scheduler's figures can be read only during a call: they are read from the
/// engine's own view of the scheduler, lent for the call ([`SchedDuringCall`]),
/// so a call pays only for the figures it reads.
#[pyclass(unsendable, module = "govlab.governors", name = "Policy")]
pub(crate) struct PolicyView {
    #[pyo3(get)]
    id: usize,
    #[pyo3(get)]
    cpus: Py<PyTuple>,
    /// The frequency table, kHz, ascending.
    #[pyo3(get)]
    opps: Py<PyTuple>,
    /// policy->cur: the frequency the policy last set, kHz.
    #[pyo3(get)]
    cur_khz: u32,
    /// Policy limits (scaling_min_freq, scaling_max_freq), kHz.
    #[pyo3(get)]
    min_khz: u32,
    #[pyo3(get)]
    max_khz: u32,
    /// Hardware limits (cpuinfo_min_freq, cpuinfo_max_freq), kHz.
    #[pyo3(get)]
    cpuinfo_min_khz: u32,
    #[pyo3(get)]
    cpuinfo_max_khz: u32,
    #[pyo3(get)]
    transition_latency_ns: u64,
    #[pyo3(get)]
    tick_ns: u64,
    /// HWP capabilities when the policy takes HWP requests, else None.
    #[pyo3(get)]
    hwp: Option<Py<HwpCapsView>>,
    /// The scheduler during the current call; None between calls.
    sched: Option<SchedDuringCall>,
    nr_cpus: usize,
    req: CpufreqRequests,
}

/// The engine's view of the scheduler, lent to a [`PolicyView`] for one call.
///
/// A Python object cannot hold a Rust borrow, so the view keeps a pointer
/// with its lifetime erased. It is set by [`PolicyView::enter`] from the
/// `Policy` the engine passed to the governor and cleared when the call
/// returns or unwinds ([`LeaveOnDrop`]); while it is set the engine is
/// inside that governor call, waiting for it, so the view is alive and
/// unchanged. The class is unsendable: only the thread of the call reads it.
struct SchedDuringCall(*const (dyn SchedView + 'static));

impl SchedDuringCall {
    fn new(sched: &dyn SchedView) -> Self {
        let ptr: *const (dyn SchedView + '_) = sched;
        // SAFETY: only the lifetime changes; the pointer is dereferenced
        // only while the borrow it came from lives (see the type's doc).
        SchedDuringCall(unsafe { std::mem::transmute::<*const (dyn SchedView + '_), *const (dyn SchedView + 'static)>(ptr) })
    }

    fn get(&self) -> &dyn SchedView {
        // SAFETY: set only during the call whose borrow it came from.
        unsafe { &*self.0 }
    }
}

impl PolicyView {
    fn new(py: Python<'_>, p: &Policy<'_>) -> PyResult<Self> {
        Ok(PolicyView {
            id: p.id,
            cpus: tuple(py, p.cpus.iter().copied())?,
            opps: tuple(py, p.opps.iter().map(|o| o.khz))?,
            cur_khz: p.cur_khz,
            min_khz: p.min_khz,
            max_khz: p.max_khz,
            cpuinfo_min_khz: p.cpuinfo_min_khz,
            cpuinfo_max_khz: p.cpuinfo_max_khz,
            transition_latency_ns: p.transition_latency_ns,
            tick_ns: p.tick_ns,
            hwp: p.hwp.map(|c| Py::new(py, HwpCapsView::from(c))).transpose()?,
            sched: None,
            nr_cpus: 0,
            req: CpufreqRequests::default(),
        })
    }

    /// Before a call: the policy's state now, and the scheduler lent for
    /// the call; the guard returned ends the loan when dropped.
    fn enter<'a, 'py>(view: &'a Bound<'py, PolicyView>, p: &Policy<'_>, nr_cpus: usize) -> LeaveOnDrop<'a, 'py> {
        let mut v = view.borrow_mut();
        v.cur_khz = p.cur_khz;
        v.min_khz = p.min_khz;
        v.max_khz = p.max_khz;
        v.sched = Some(SchedDuringCall::new(p.sched));
        v.nr_cpus = nr_cpus;
        v.req = CpufreqRequests::default();
        LeaveOnDrop(view)
    }

    /// A figure of `cpu`, during a call only.
    fn read<T>(&self, cpu: usize, get: impl FnOnce(&dyn SchedView) -> T) -> PyResult<T> {
        let Some(sched) = &self.sched else {
            return Err(PyRuntimeError::new_err("a Policy can be read only during the governor call it was given to"));
        };
        if cpu >= self.nr_cpus {
            return Err(PyIndexError::new_err(format!("CPU {cpu} does not exist; the machine has CPUs 0 to {}", self.nr_cpus - 1)));
        }
        Ok(get(sched.get()))
    }
}

/// Ends a call's loan of the scheduler to a [`PolicyView`], however the
/// call ends; [`LeaveOnDrop::requests`] hands over what the governor asked.
struct LeaveOnDrop<'a, 'py>(&'a Bound<'py, PolicyView>);

impl LeaveOnDrop<'_, '_> {
    fn requests(self) -> CpufreqRequests {
        std::mem::take(&mut self.0.borrow_mut().req)
    }
}

impl Drop for LeaveOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.borrow_mut().sched = None;
    }
}

#[pymethods]
impl PolicyView {
    /// CFS utilisation of `cpu` as schedutil reads it, 0..capacity.
    fn util(&self, cpu: usize) -> PyResult<u64> {
        self.read(cpu, |s| s.cpu_util(cpu))
    }

    /// `cpu_util_cfs_boost` of `cpu` (v6.5+ schedutil's reading): as
    /// `util`, with the runqueue's runnable_avg also raising it.
    fn util_boost(&self, cpu: usize) -> PyResult<u64> {
        self.read(cpu, |s| s.cpu_util_boost(cpu))
    }

    /// arch_scale_cpu_capacity of `cpu` (1024 on the biggest CPUs).
    fn capacity(&self, cpu: usize) -> PyResult<u64> {
        self.read(cpu, |s| s.capacity(cpu))
    }

    /// Cumulative idle time of `cpu` up to `now_ns` (get_cpu_idle_time), ns.
    fn idle_ns(&self, cpu: usize, now_ns: u64) -> PyResult<u64> {
        self.read(cpu, |s| s.idle_ns(cpu, now_ns))
    }

    /// Cumulative idle time of `cpu` with a task in iowait on it, ns.
    fn iowait_ns(&self, cpu: usize, now_ns: u64) -> PyResult<u64> {
        self.read(cpu, |s| s.iowait_ns(cpu, now_ns))
    }

    /// Tasks on the runqueue of `cpu`, the running one included.
    fn nr_running(&self, cpu: usize) -> PyResult<u32> {
        self.read(cpu, |s| s.nr_running(cpu))
    }

    /// Idle entries of `cpu` with the tick stopped, or None if not counted.
    fn idle_calls(&self, cpu: usize) -> PyResult<Option<u64>> {
        self.read(cpu, |s| s.idle_calls(cpu))
    }

    /// Ask for `khz` with a relation: "L" (lowest table frequency at or
    /// above), "H" (highest at or below) or "C" (closest). Returning a
    /// frequency from the call is `set_target(khz, "L")`.
    #[pyo3(signature = (khz, relation = "L"))]
    fn set_target(&mut self, khz: i64, relation: &str) -> PyResult<()> {
        let relation = external::relation(relation).map_err(PyValueError::new_err)?;
        let khz = external::check_target_khz(khz, self.min_khz, self.max_khz, self.hwp.is_some()).map_err(PyValueError::new_err)?;
        self.req.target = Some((khz, relation));
        Ok(())
    }

    /// Arm (or re-arm) the governor's timer `delay_ns` from now; it calls
    /// `timer(policy, time_ns)`. A deferrable timer does not wake an idle
    /// policy: it fires at the first wakeup of one of its CPUs.
    #[pyo3(signature = (delay_ns, deferrable = true))]
    fn arm_timer(&mut self, delay_ns: u64, deferrable: bool) {
        self.req.timer = Some((delay_ns, deferrable));
        self.req.cancel_timer = false;
    }

    fn cancel_timer(&mut self) {
        self.req.timer = None;
        self.req.cancel_timer = true;
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let cpus = self.cpus.bind(py).str().map_or_else(|_| "?".into(), |s| s.to_string());
        format!("<Policy {} cpus={cpus} cur={} kHz limits={}..{} kHz>", self.id, self.cur_khz, self.min_khz, self.max_khz)
    }
}

#[derive(Clone, Copy)]
enum Call {
    Start,
    Update { cpu: usize, flags: u32 },
    Timer,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Start => "start",
            Call::Update { .. } => "update",
            Call::Timer => "timer",
        }
    }
}

/// A Python cpufreq governor object behind the engine's trait.
pub(crate) struct PyCpufreq {
    who: Who,
    start: PyObject,
    update: PyObject,
    timer: PyObject,
    uses_hook: bool,
    /// The driver the governor is part of (its class's `driver`).
    driver: Option<&'static str>,
    tunables: Vec<(String, String)>,
    nr_cpus: usize,
    /// One view per policy id, made at its first call.
    views: Vec<Option<Py<PolicyView>>>,
    /// Time of the latest call with a time (start has none), ns.
    now_ns: u64,
    failed: bool,
    error: Option<Error>,
}

/// The factory for a run: `name` stands for the governor in messages and
/// the result; `gov` is the Python object.
pub(crate) fn factory(name: String, gov: PyObject) -> CpufreqFactory {
    Box::new(move |ctx| {
        Python::with_gil(|py| {
            let who = Who::new("cpufreq", &name);
            let g = gov.bind(py);
            let tunables = init(py, &who, g, ctx)?;
            let lookup = |attr: &str| method(g, attr).map_err(|e| who.exception(py, attr, 0, &e));
            let (start, update, timer) = (lookup("start")?, lookup("update")?, lookup("timer")?);
            let uses_hook = g
                .getattr("uses_util_hook")
                .and_then(|v| v.is_truthy())
                .map_err(|e| who.exception(py, "uses_util_hook", 0, &e))?;
            let driver = g.getattr("driver").map_err(|e| who.exception(py, "driver", 0, &e))?;
            let driver = driver
                .extract::<Option<String>>()
                .map_err(|_| who.error("driver", 0, format!("is {}; expected None or a driver name such as \"intel_pstate\"", shown(&driver))))?
                .map(|d| intern(&d));
            Ok(Box::new(PyCpufreq {
                who,
                start,
                update,
                timer,
                uses_hook,
                driver,
                tunables,
                nr_cpus: ctx.platform.nr_cpus(),
                views: Vec::new(),
                now_ns: 0,
                failed: false,
                error: None,
            }) as Box<dyn CpufreqGovernor>)
        })
    })
}

impl PyCpufreq {
    fn view(&mut self, py: Python<'_>, p: &Policy<'_>) -> PyResult<Py<PolicyView>> {
        if self.views.len() <= p.id {
            self.views.resize_with(p.id + 1, || None);
        }
        if let Some(v) = &self.views[p.id] {
            return Ok(v.clone_ref(py));
        }
        let v = Py::new(py, PolicyView::new(py, p)?)?;
        self.views[p.id] = Some(v.clone_ref(py));
        Ok(v)
    }

    /// One call into Python; a failure is kept and stops further calls.
    fn call(&mut self, p: &mut Policy<'_>, call: Call, time_ns: u64) {
        if self.failed {
            return;
        }
        if let Err(e) = Python::with_gil(|py| self.call_py(py, p, call, time_ns)) {
            self.failed = true;
            self.error = Some(e);
        }
    }

    fn call_py(&mut self, py: Python<'_>, p: &mut Policy<'_>, call: Call, time_ns: u64) -> Result<(), Error> {
        let name = call.name();
        let view = self.view(py, p).map_err(|e| self.who.exception(py, name, time_ns, &e))?;
        let view = view.bind(py);
        let during = PolicyView::enter(view, p, self.nr_cpus);
        let ret = match call {
            Call::Start => self.start.call1(py, (view,)),
            Call::Update { cpu, flags } => {
                let (util, max) = (p.sched.cpu_util(cpu), p.sched.capacity(cpu));
                self.update.call1(py, (view, cpu, time_ns, util, max, flags))
            }
            Call::Timer => self.timer.call1(py, (view, time_ns)),
        };
        let req = during.requests();
        let ret = ret.map_err(|e| self.who.exception(py, name, time_ns, &e))?;
        let ret = ret.bind(py);
        external::apply_cpufreq(p, answer(ret), || shown_answer(ret), req).map_err(|why| self.who.error(name, time_ns, why))
    }
}

/// What a call returned, as the engine takes it.
fn answer(v: &Bound<'_, PyAny>) -> CpufreqAnswer {
    if v.is_none() {
        CpufreqAnswer::Nothing
    } else if let Ok(hwp) = v.downcast::<HwpRequestPy>() {
        hwp.get().answer()
    } else {
        int_of(v).map_or(CpufreqAnswer::Other, CpufreqAnswer::Khz)
    }
}

/// A returned value as messages show it: an HwpRequest by its repr, any
/// other value with its type.
fn shown_answer(v: &Bound<'_, PyAny>) -> String {
    match v.downcast::<HwpRequestPy>() {
        Ok(hwp) => hwp.get().__repr__(),
        Err(_) => shown(v),
    }
}

impl CpufreqGovernor for PyCpufreq {
    fn name(&self) -> &'static str {
        self.who.name
    }

    fn uses_util_hook(&self) -> bool {
        self.uses_hook
    }

    fn driver(&self) -> Option<&'static str> {
        self.driver
    }

    fn start(&mut self, policy: &mut Policy<'_>) {
        self.call(policy, Call::Start, self.now_ns);
    }

    fn update_util(&mut self, policy: &mut Policy<'_>, cpu: usize, time_ns: u64, flags: u32) {
        self.now_ns = time_ns;
        self.call(policy, Call::Update { cpu, flags }, time_ns);
    }

    fn timer(&mut self, policy: &mut Policy<'_>, time_ns: u64) {
        self.now_ns = time_ns;
        self.call(policy, Call::Timer, time_ns);
    }

    fn tunables(&self) -> Vec<(String, String)> {
        self.tunables.clone()
    }

    fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
}
