//! A cpufreq governor written in Python, on [`CpufreqGovernor`].

use govlab_core::cpufreq::{CpufreqGovernor, Policy, SchedView};
use govlab_core::external::{self, CpufreqAnswer, CpufreqFactory, CpufreqRequests};
use govlab_core::Error;
use std::cell::RefCell;
use std::ffi::CStr;

use pyo3::exceptions::{PyIndexError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::GILProtected;
use pyo3::types::{PyInt, PyTuple};

use super::hwp::{HwpCapsView, HwpRequestPy};
use super::{init, int, int_of, method, shown, Who};

/// A policy as a Python governor sees it: its fixed data, its current
/// frequency and limits, the scheduler's figures for any CPU, and the
/// requests a governor may make besides returning a frequency.
///
/// One object per policy for the whole run. The class is frozen and its
/// fixed data are Python objects made once, so reading one (`policy.id`)
/// is a struct member read, which the interpreter does without calling
/// into Rust; what changes between calls (`cur_khz` and the limits) and
/// the call in progress are kept under the GIL ([`DuringCall`]). The
/// scheduler's figures can be read only during a call: they are read from
/// the engine's own view of the scheduler, lent for the call
/// ([`SchedDuringCall`]), so a call pays only for the figures it reads.
#[pyclass(frozen, module = "govlab.governors", name = "Policy")]
pub(crate) struct PolicyView {
    #[pyo3(get)]
    id: Py<PyInt>,
    #[pyo3(get)]
    cpus: Py<PyTuple>,
    /// The frequency table, kHz, ascending.
    #[pyo3(get)]
    opps: Py<PyTuple>,
    /// Hardware limits (cpuinfo_min_freq, cpuinfo_max_freq), kHz.
    #[pyo3(get)]
    cpuinfo_min_khz: Py<PyInt>,
    #[pyo3(get)]
    cpuinfo_max_khz: Py<PyInt>,
    #[pyo3(get)]
    transition_latency_ns: Py<PyInt>,
    #[pyo3(get)]
    tick_ns: Py<PyInt>,
    /// HWP capabilities (an HwpCaps) when the policy takes HWP requests,
    /// else None.
    #[pyo3(get)]
    hwp: PyObject,
    policy: usize,
    nr_cpus: usize,
    takes_hwp: bool,
    call: GILProtected<RefCell<DuringCall>>,
}

/// What changes in a [`PolicyView`] from call to call.
#[derive(Default)]
struct DuringCall {
    /// The scheduler during the current call; None between calls.
    sched: Option<SchedDuringCall>,
    /// policy->cur, kHz.
    cur_khz: HeldInt<u32>,
    /// Policy limits (scaling_min_freq, scaling_max_freq), kHz.
    min_khz: HeldInt<u32>,
    max_khz: HeldInt<u32>,
    req: CpufreqRequests,
}

/// A value and the Python int of it, made when first read and kept while
/// the value stays: the limits change rarely, `cur` at most at each
/// frequency change, and a hook's time is the same for a burst of calls
/// (a wakeup's enqueue, then the tick).
#[derive(Default)]
struct HeldInt<T> {
    value: T,
    int: Option<Py<PyInt>>,
}

impl<T: Copy + PartialEq + Into<u64>> HeldInt<T> {
    fn set(&mut self, value: T) {
        if value != self.value {
            self.value = value;
            self.int = None;
        }
    }

    fn get(&mut self, py: Python<'_>) -> Py<PyInt> {
        if let Some(i) = &self.int {
            return i.clone_ref(py);
        }
        let i = int(py, self.value.into()).unbind();
        self.int = Some(i.clone_ref(py));
        i
    }
}

/// The engine's view of the scheduler, lent to a [`PolicyView`] for one call.
///
/// A Python object cannot hold a Rust borrow, so the view keeps a pointer
/// with its lifetime erased. It is set by [`PolicyView::enter`] from the
/// `Policy` the engine passed to the governor and cleared when the call
/// returns or unwinds ([`LeaveOnDrop`]); while it is set the engine is
/// inside that governor call, waiting for it, so the view is alive and
/// unchanged. It is read only with the GIL held ([`GILProtected`]): by the
/// call's own Python code, or by another Python thread while that code has
/// let the GIL go, the engine's thread still waiting for the call.
struct SchedDuringCall(*const (dyn SchedView + 'static));

// SAFETY: see the type's doc: dereferenced only during the call that lent
// it, under the GIL, while the engine's thread waits inside that call.
unsafe impl Send for SchedDuringCall {}

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
    fn new(py: Python<'_>, p: &Policy<'_>, nr_cpus: usize) -> PyResult<Self> {
        let int = |v: u64| v.into_pyobject(py).map(Bound::unbind);
        Ok(PolicyView {
            id: int(p.id as u64)?,
            cpus: PyTuple::new(py, p.cpus.iter().copied())?.unbind(),
            opps: PyTuple::new(py, p.opps.iter().map(|o| o.khz))?.unbind(),
            cpuinfo_min_khz: int(p.cpuinfo_min_khz.into())?,
            cpuinfo_max_khz: int(p.cpuinfo_max_khz.into())?,
            transition_latency_ns: int(p.transition_latency_ns)?,
            tick_ns: int(p.tick_ns)?,
            hwp: p.hwp.map(|c| Py::new(py, HwpCapsView::from(c))).transpose()?.into_pyobject(py)?.unbind(),
            policy: p.id,
            nr_cpus,
            takes_hwp: p.hwp.is_some(),
            call: GILProtected::new(RefCell::new(DuringCall::default())),
        })
    }

    /// Before a call: the policy's state now, and the scheduler lent for
    /// the call; the guard returned ends the loan when dropped.
    fn enter<'a, 'py>(view: &'a Bound<'py, PolicyView>, p: &Policy<'_>) -> LeaveOnDrop<'a, 'py> {
        let mut c = view.get().call.get(view.py()).borrow_mut();
        c.cur_khz.set(p.cur_khz);
        c.min_khz.set(p.min_khz);
        c.max_khz.set(p.max_khz);
        c.sched = Some(SchedDuringCall::new(p.sched));
        c.req = CpufreqRequests::default();
        LeaveOnDrop(view)
    }

    fn during<'a>(&'a self, py: Python<'a>) -> std::cell::RefMut<'a, DuringCall> {
        self.call.get(py).borrow_mut()
    }

    /// A figure of `cpu`, during a call only.
    fn read<T>(&self, py: Python<'_>, cpu: usize, get: impl FnOnce(&dyn SchedView) -> T) -> PyResult<T> {
        let c = self.call.get(py).borrow();
        let Some(sched) = &c.sched else {
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
        std::mem::take(&mut self.0.get().during(self.0.py()).req)
    }
}

impl Drop for LeaveOnDrop<'_, '_> {
    fn drop(&mut self) {
        self.0.get().during(self.0.py()).sched = None;
    }
}

#[pymethods]
impl PolicyView {
    /// policy->cur: the frequency the policy last set, kHz.
    #[getter]
    fn cur_khz(&self, py: Python<'_>) -> Py<PyInt> {
        self.during(py).cur_khz.get(py)
    }

    /// Policy limits (scaling_min_freq, scaling_max_freq), kHz.
    #[getter]
    fn min_khz(&self, py: Python<'_>) -> Py<PyInt> {
        self.during(py).min_khz.get(py)
    }

    #[getter]
    fn max_khz(&self, py: Python<'_>) -> Py<PyInt> {
        self.during(py).max_khz.get(py)
    }

    /// Cumulative idle time of `cpu` up to `now_ns` (get_cpu_idle_time), ns.
    fn idle_ns(&self, py: Python<'_>, cpu: usize, now_ns: u64) -> PyResult<u64> {
        self.read(py, cpu, |s| s.idle_ns(cpu, now_ns))
    }

    /// Cumulative idle time of `cpu` with a task in iowait on it, ns.
    fn iowait_ns(&self, py: Python<'_>, cpu: usize, now_ns: u64) -> PyResult<u64> {
        self.read(py, cpu, |s| s.iowait_ns(cpu, now_ns))
    }

    /// Tasks on the runqueue of `cpu`, the running one included.
    fn nr_running<'py>(&self, py: Python<'py>, cpu: usize) -> PyResult<Bound<'py, PyInt>> {
        Ok(int(py, self.read(py, cpu, |s| s.nr_running(cpu))?.into()))
    }

    /// Ask for `khz` with a relation: "L" (lowest table frequency at or
    /// above), "H" (highest at or below) or "C" (closest). Returning a
    /// frequency from the call is `set_target(khz, "L")`.
    #[pyo3(signature = (khz, relation = "L"))]
    fn set_target(&self, py: Python<'_>, khz: i64, relation: &str) -> PyResult<()> {
        let relation = external::relation(relation).map_err(PyValueError::new_err)?;
        let mut c = self.during(py);
        let khz = external::check_target_khz(khz, c.min_khz.value, c.max_khz.value, self.takes_hwp).map_err(PyValueError::new_err)?;
        c.req.target = Some((khz, relation));
        Ok(())
    }

    /// Arm (or re-arm) the governor's timer `delay_ns` from now; it calls
    /// `timer(policy, time_ns)`. A deferrable timer does not wake an idle
    /// policy: it fires at the first wakeup of one of its CPUs.
    #[pyo3(signature = (delay_ns, deferrable = true))]
    fn arm_timer(&self, py: Python<'_>, delay_ns: u64, deferrable: bool) {
        let mut c = self.during(py);
        c.req.timer = Some((delay_ns, deferrable));
        c.req.cancel_timer = false;
    }

    fn cancel_timer(&self, py: Python<'_>) {
        let mut c = self.during(py);
        c.req.timer = None;
        c.req.cancel_timer = true;
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let cpus = self.cpus.bind(py).str().map_or_else(|_| "?".into(), |s| s.to_string());
        let c = self.call.get(py).borrow();
        format!("<Policy {} cpus={cpus} cur={} kHz limits={}..{} kHz>", self.policy, c.cur_khz.value, c.min_khz.value, c.max_khz.value)
    }
}

/// The readers a hook calls most, `util(cpu)`, `util_boost(cpu)`,
/// `capacity(cpu)` and `idle_calls(cpu)`, are plain C methods (fastcall)
/// of the Policy class, installed by [`install_readers`] in place of
/// methods made by `#[pymethods]`: those parse their arguments with a
/// general description and check the class of `self` on every call, which
/// cost about four times what the reading does (callgrind, session 22).
/// Here CPython checks `self` (a method descriptor of the class calls only
/// with an instance of it), and the one argument, `cpu` (by position or
/// by name, as before), is converted directly.
type Reader = fn(&PolicyView, Python<'_>, usize) -> PyResult<PyObject>;

const READERS: [(&CStr, &CStr, ffi::PyCFunctionFastWithKeywords); 4] = [
    (c"util", c"util($self, cpu)\n--\n\nCFS utilisation of `cpu` as schedutil reads it, 0..capacity.", util_c),
    (
        c"util_boost",
        c"util_boost($self, cpu)\n--\n\n`cpu_util_cfs_boost` of `cpu` (v6.5+ schedutil's reading): as `util`, with the runqueue's runnable_avg also raising it.",
        util_boost_c,
    ),
    (c"capacity", c"capacity($self, cpu)\n--\n\narch_scale_cpu_capacity of `cpu` (1024 on the biggest CPUs).", capacity_c),
    (c"idle_calls", c"idle_calls($self, cpu)\n--\n\nIdle entries of `cpu` with the tick stopped, or None if not counted.", idle_calls_c),
];

/// Add [`READERS`] to the Policy class, once, when the module is made.
pub(crate) fn install_readers(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<PolicyView>();
    for (name, doc, meth) in READERS {
        // The class keeps the method definition for good.
        let def = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: name.as_ptr(),
            ml_meth: ffi::PyMethodDefPointer { PyCFunctionFastWithKeywords: meth },
            ml_flags: ffi::METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: doc.as_ptr(),
        }));
        // SAFETY: `ty` is a live type object and `def` lives for good.
        let descr = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_type_ptr(), def))? };
        ty.setattr(name.to_str()?, descr)?;
    }
    Ok(())
}

/// One reader's call: `slf` a Policy (CPython checked), the CPU the one
/// argument, by position or named `cpu`.
///
/// # Safety
/// Called by CPython only, as a fastcall method of the Policy class: with
/// the GIL held, `slf` an instance of the class, `args` `nargs` borrowed
/// references followed by one per name in `kwnames` (a tuple, or null).
unsafe fn call_reader(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject, read: Reader) -> *mut ffi::PyObject {
    // SAFETY: see the function's doc.
    let py = unsafe { Python::assume_gil_acquired() };
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: see the function's doc.
        let view = unsafe { Bound::from_borrowed_ptr(py, slf).downcast_into_unchecked::<PolicyView>() };
        // SAFETY: see the function's doc.
        let names = unsafe { Bound::from_borrowed_ptr_or_opt(py, kwnames) };
        let named = match &names {
            Some(n) => n.len()?,
            None => 0,
        };
        let by_name = match &names {
            Some(n) if named == 1 && nargs == 0 => n.get_item(0)?.eq("cpu")?,
            _ => false,
        };
        if !((nargs == 1 && named == 0) || by_name) {
            return Err(PyTypeError::new_err("takes one argument, cpu"));
        }
        // SAFETY: one argument, checked above.
        let cpu = unsafe { Bound::from_borrowed_ptr(py, *args) }.extract::<usize>()?;
        read(view.get(), py, cpu)
    }));
    match out {
        Ok(Ok(v)) => v.into_ptr(),
        Ok(Err(e)) => {
            e.restore(py);
            std::ptr::null_mut()
        }
        Err(_) => {
            PyRuntimeError::new_err("a Policy reader panicked").restore(py);
            std::ptr::null_mut()
        }
    }
}

/// A reader's C entry: `$name(policy, cpu)` returning `$read`'s figure.
macro_rules! int_reader {
    ($name:ident, $read:ident) => {
        unsafe extern "C" fn $name(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
            // SAFETY: a fastcall method of the Policy class (see call_reader).
            unsafe { call_reader(slf, args, nargs, kwnames, |v, py, cpu| Ok(int(py, v.read(py, cpu, |s| s.$read(cpu))?).into_any().unbind())) }
        }
    };
}

int_reader!(util_c, cpu_util);
int_reader!(util_boost_c, cpu_util_boost);
int_reader!(capacity_c, capacity);

unsafe extern "C" fn idle_calls_c(slf: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargs: ffi::Py_ssize_t, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: a fastcall method of the Policy class (see call_reader).
    unsafe {
        call_reader(slf, args, nargs, kwnames, |v, py, cpu| {
            Ok(match v.read(py, cpu, |s| s.idle_calls(cpu))? {
                Some(n) => int(py, n).into_any().unbind(),
                None => py.None(),
            })
        })
    }
}

#[derive(Clone, Copy)]
enum Call {
    Start,
    Update { cpu: usize, flags: u32 },
    Rejected { cpu: usize, flags: u32 },
    Timer,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Start => "start",
            Call::Update { .. } => "update",
            Call::Rejected { .. } => "update_rejected",
            Call::Timer => "timer",
        }
    }
}

/// A Python cpufreq governor object behind the engine's trait.
pub(crate) struct PyCpufreq {
    who: Who,
    start: PyObject,
    update: PyObject,
    /// `update_rejected`, when the class defines it (`sees_rejected_calls`).
    rejected: Option<PyObject>,
    timer: PyObject,
    /// The latest hook call's time and its Python int.
    time_int: HeldInt<u64>,
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
            let sees_rejected = g
                .getattr("sees_rejected_calls")
                .and_then(|v| v.is_truthy())
                .map_err(|e| who.exception(py, "sees_rejected_calls", 0, &e))?;
            let rejected = if sees_rejected { Some(lookup("update_rejected")?) } else { None };
            let driver = g.getattr("driver").map_err(|e| who.exception(py, "driver", 0, &e))?;
            let driver = driver
                .extract::<Option<String>>()
                .map_err(|_| who.error("driver", 0, format!("is {}; expected None or a driver name such as \"intel_pstate\"", shown(&driver))))?
                .map(|d| super::intern(&d));
            Ok(Box::new(PyCpufreq {
                who,
                start,
                update,
                rejected,
                timer,
                time_int: HeldInt::default(),
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

/// The view of policy `p`, made at its first call.
fn view_of<'v>(views: &'v mut Vec<Option<Py<PolicyView>>>, py: Python<'_>, p: &Policy<'_>, nr_cpus: usize) -> PyResult<&'v Py<PolicyView>> {
    if views.len() <= p.id {
        views.resize_with(p.id + 1, || None);
    }
    match &mut views[p.id] {
        Some(v) => Ok(v),
        slot => Ok(slot.insert(Py::new(py, PolicyView::new(py, p, nr_cpus)?)?)),
    }
}

impl PyCpufreq {
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
        let who = &self.who;
        let view = &view_of(&mut self.views, py, p, self.nr_cpus).map_err(|e| who.exception(py, name, time_ns, &e))?.bind(py).clone();
        let during = PolicyView::enter(view, p);
        let ret = match call {
            Call::Start => self.start.call1(py, (view,)),
            Call::Update { cpu, flags } => self.call_update(py, view, p, cpu, flags, time_ns),
            Call::Rejected { cpu, flags } => match &self.rejected {
                Some(f) => f.call1(py, (view, cpu, time_ns, flags)),
                None => Ok(py.None()),
            },
            Call::Timer => self.timer.call1(py, (view, time_ns)),
        };
        let req = during.requests();
        let ret = ret.map_err(|e| self.who.exception(py, name, time_ns, &e))?;
        let ret = ret.bind(py);
        if matches!(call, Call::Rejected { .. }) && !ret.is_none() {
            return Err(self.who.error(name, time_ns, format!("returned {}; expected None (a rejected call changes no frequency)", shown_answer(ret))));
        }
        external::apply_cpufreq(p, answer(ret), || shown_answer(ret), req).map_err(|why| self.who.error(name, time_ns, why))
    }
}

extern "C" {
    /// CPython's vectorcall entry: the arguments as an array, no tuple.
    /// In the limited API from 3.12; CPython exports it from 3.9, and this
    /// module needs 3.11 or later (abi3-py311).
    fn PyObject_Vectorcall(callable: *mut ffi::PyObject, args: *const *mut ffi::PyObject, nargsf: usize, kwnames: *mut ffi::PyObject) -> *mut ffi::PyObject;
}

/// PY_VECTORCALL_ARGUMENTS_OFFSET: the slot before the arguments is ours
/// to lend, so a bound method puts its object there instead of copying
/// the arguments.
const VECTORCALL_ARGUMENTS_OFFSET: usize = 1 << (usize::BITS - 1);

impl PyCpufreq {
    /// `update(policy, cpu, time_ns, util, max, flags)`, through vectorcall:
    /// the hook runs on most scheduler events, and a tuple of arguments
    /// made and freed per call cost about 400 instructions (callgrind).
    fn call_update(&mut self, py: Python<'_>, view: &Bound<'_, PolicyView>, p: &Policy<'_>, cpu: usize, flags: u32, time_ns: u64) -> PyResult<PyObject> {
        let (util, max) = (int(py, p.sched.cpu_util(cpu)), int(py, p.sched.capacity(cpu)));
        self.time_int.set(time_ns);
        let time = self.time_int.get(py);
        let (cpu, flags) = (int(py, cpu as u64), int(py, flags.into()));
        // Slot 0 is the lent one; the references stay ours, held above.
        let mut args = [std::ptr::null_mut(), view.as_ptr(), cpu.as_ptr(), time.as_ptr(), util.as_ptr(), max.as_ptr(), flags.as_ptr()];
        // SAFETY: with the GIL held, a live callable and six live
        // arguments after the lent slot, which is writable.
        unsafe {
            let ret = PyObject_Vectorcall(self.update.as_ptr(), args.as_mut_ptr().add(1), 6 | VECTORCALL_ARGUMENTS_OFFSET, std::ptr::null_mut());
            Bound::from_owned_ptr_or_err(py, ret).map(Bound::unbind)
        }
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

    fn rejected_calls_need_view(&self) -> bool {
        self.rejected.is_some()
    }

    fn update_util_rejected_view(&mut self, policy: &mut Policy<'_>, cpu: usize, time_ns: u64, flags: u32) {
        self.now_ns = time_ns;
        self.call(policy, Call::Rejected { cpu, flags }, time_ns);
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
