//! A cpufreq governor written in Python, on [`CpufreqGovernor`].

use govlab_core::cpufreq::{CpufreqGovernor, HwpRequest, Policy, Relation, SchedView};
use govlab_core::external::CpufreqFactory;
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
/// scheduler's figures can be read only during a call.
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
    nr_cpus: usize,
    /// The engine's scheduler view, set only while a call runs.
    sched: Option<*const (dyn SchedView + 'static)>,
    req: Requests,
}

/// What the governor asked for through the policy's methods in one call.
#[derive(Default)]
struct Requests {
    target: Option<(u32, Relation)>,
    timer: Option<(u64, bool)>,
    cancel_timer: bool,
}

impl PolicyView {
    fn new(py: Python<'_>, p: &Policy<'_>, nr_cpus: usize) -> PyResult<Self> {
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
            nr_cpus,
            sched: None,
            req: Requests::default(),
        })
    }

    /// Before a call: the policy's state now, and the scheduler to read.
    fn enter(&mut self, p: &Policy<'_>) {
        self.cur_khz = p.cur_khz;
        self.min_khz = p.min_khz;
        self.max_khz = p.max_khz;
        let sched: *const (dyn SchedView + '_) = p.sched;
        // SAFETY: only the lifetime bound is erased. The pointer is read
        // only by this view's methods, and `leave` clears it before the
        // engine's call (which holds the borrow) returns. (An `as` cast may
        // not extend a trait object's lifetime.)
        #[allow(clippy::transmute_ptr_to_ptr)]
        let sched = unsafe { std::mem::transmute::<*const (dyn SchedView + '_), *const (dyn SchedView + 'static)>(sched) };
        self.sched = Some(sched);
        self.req = Requests::default();
    }

    /// After a call: forget the scheduler, hand over the requests.
    fn leave(&mut self) -> Requests {
        self.sched = None;
        std::mem::take(&mut self.req)
    }

    fn sched(&self, cpu: usize) -> PyResult<&dyn SchedView> {
        let Some(sched) = self.sched else {
            return Err(PyRuntimeError::new_err("a Policy can be read only during the governor call it was given to"));
        };
        if cpu >= self.nr_cpus {
            return Err(PyIndexError::new_err(format!("CPU {cpu} does not exist; the machine has CPUs 0 to {}", self.nr_cpus - 1)));
        }
        // SAFETY: set by `enter` from a live borrow, cleared by `leave`.
        Ok(unsafe { &*sched })
    }

    fn check_khz(&self, khz: i64) -> PyResult<u32> {
        if self.hwp.is_some() {
            return Err(PyValueError::new_err(HWP_TAKES_NO_FREQUENCY));
        }
        match u32::try_from(khz) {
            Ok(k) if (self.min_khz..=self.max_khz).contains(&k) => Ok(k),
            _ => Err(PyValueError::new_err(format!(
                "{khz} kHz is outside the policy limits, {} to {} kHz",
                self.min_khz, self.max_khz
            ))),
        }
    }
}

#[pymethods]
impl PolicyView {
    /// CFS utilisation of `cpu` as schedutil reads it, 0..capacity.
    fn util(&self, cpu: usize) -> PyResult<u64> {
        Ok(self.sched(cpu)?.cpu_util(cpu))
    }

    /// arch_scale_cpu_capacity of `cpu` (1024 on the biggest CPUs).
    fn capacity(&self, cpu: usize) -> PyResult<u64> {
        Ok(self.sched(cpu)?.capacity(cpu))
    }

    /// Cumulative idle time of `cpu` up to `now_ns` (get_cpu_idle_time), ns.
    fn idle_ns(&self, cpu: usize, now_ns: u64) -> PyResult<u64> {
        Ok(self.sched(cpu)?.idle_ns(cpu, now_ns))
    }

    /// Cumulative idle time of `cpu` with a task in iowait on it, ns.
    fn iowait_ns(&self, cpu: usize, now_ns: u64) -> PyResult<u64> {
        Ok(self.sched(cpu)?.iowait_ns(cpu, now_ns))
    }

    /// Tasks on the runqueue of `cpu`, the running one included.
    fn nr_running(&self, cpu: usize) -> PyResult<u32> {
        Ok(self.sched(cpu)?.nr_running(cpu))
    }

    /// Idle entries of `cpu` with the tick stopped, or None if not counted.
    fn idle_calls(&self, cpu: usize) -> PyResult<Option<u64>> {
        Ok(self.sched(cpu)?.idle_calls(cpu))
    }

    /// Ask for `khz` with a relation: "L" (lowest table frequency at or
    /// above), "H" (highest at or below) or "C" (closest). Returning a
    /// frequency from the call is `set_target(khz, "L")`.
    #[pyo3(signature = (khz, relation = "L"))]
    fn set_target(&mut self, khz: i64, relation: &str) -> PyResult<()> {
        let relation = match relation {
            "L" => Relation::L,
            "H" => Relation::H,
            "C" => Relation::C,
            other => return Err(PyValueError::new_err(format!("relation {other:?} is not one of \"L\", \"H\", \"C\""))),
        };
        self.req.target = Some((self.check_khz(khz)?, relation));
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

/// Why a policy that takes HWP requests refuses a frequency.
const HWP_TAKES_NO_FREQUENCY: &str = "with HWP on, intel_pstate's active mode writes HWP requests, and the \
    hardware ignores P-state requests (IA32_PERF_CTL): return an HwpRequest";

/// What a call answered.
enum Answer {
    Nothing,
    Khz(u32),
    Hwp(HwpRequest),
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
    Box::new(move |platform| {
        Python::with_gil(|py| {
            let who = Who::new("cpufreq", &name);
            let g = gov.bind(py);
            let tunables = init(py, &who, g, platform)?;
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
                nr_cpus: platform.nr_cpus(),
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
        let v = Py::new(py, PolicyView::new(py, p, self.nr_cpus)?)?;
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
        view.borrow_mut().enter(p);
        let ret = match call {
            Call::Start => self.start.call1(py, (view,)),
            Call::Update { cpu, flags } => {
                let (util, max) = (p.sched.cpu_util(cpu), p.sched.capacity(cpu));
                self.update.call1(py, (view, cpu, time_ns, util, max, flags))
            }
            Call::Timer => self.timer.call1(py, (view, time_ns)),
        };
        let req = view.borrow_mut().leave();
        let ret = ret.map_err(|e| self.who.exception(py, name, time_ns, &e))?;
        match self.answer(ret.bind(py), p, name, time_ns)? {
            Answer::Hwp(hwp) => p.set_hwp_request(hwp),
            Answer::Khz(khz) => p.set_target(khz, Relation::L),
            Answer::Nothing => {
                if let Some((khz, relation)) = req.target {
                    p.set_target(khz, relation);
                }
            }
        }
        if req.cancel_timer {
            p.cancel_timer();
        }
        if let Some((delay_ns, deferrable)) = req.timer {
            p.arm_timer(delay_ns, deferrable);
        }
        Ok(())
    }

    /// What a call returned: None, an HWP request the policy takes, or an
    /// int within the limits.
    fn answer(&self, v: &Bound<'_, PyAny>, p: &Policy<'_>, name: &str, time_ns: u64) -> Result<Answer, Error> {
        if v.is_none() {
            return Ok(Answer::Nothing);
        }
        if let Ok(hwp) = v.downcast::<HwpRequestPy>() {
            let hwp = hwp.get();
            return hwp
                .request()
                .and_then(|req| p.check_hwp_request(&req).map(|()| Answer::Hwp(req)))
                .map_err(|why| self.who.error(name, time_ns, format!("returned {}: {why}", hwp.__repr__())));
        }
        let khz = int_of(v).map(u32::try_from);
        if p.hwp.is_some() {
            let what = if khz.is_some() { HWP_TAKES_NO_FREQUENCY } else { "expected an HwpRequest or None (HWP is on)" };
            return Err(self.who.error(name, time_ns, format!("returned {}; {what}", shown(v))));
        }
        match khz {
            Some(Ok(khz)) if (p.min_khz..=p.max_khz).contains(&khz) => Ok(Answer::Khz(khz)),
            Some(_) => Err(self.who.error(
                name,
                time_ns,
                format!(
                    "returned {}: outside the limits of policy {}, {} to {} kHz",
                    shown(v),
                    p.id,
                    p.min_khz,
                    p.max_khz
                ),
            )),
            None => Err(self.who.error(
                name,
                time_ns,
                format!("returned {}; expected a frequency in kHz (int), an HwpRequest or None", shown(v)),
            )),
        }
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
