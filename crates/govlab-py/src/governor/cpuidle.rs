//! A cpuidle governor written in Python, on [`CpuidleGovernor`].

use govlab_core::cpuidle::{CpuidleGovernor, IdleDevice, Reflection, SelectArgs, Selection};
use govlab_core::external::{self, CpuidleFactory};
use govlab_core::platform::IdleState;
use govlab_core::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList, PyTuple};

use super::{init, int_of, method, shown, tuple, Who};

/// One idle state of a CPU (read-only).
#[pyclass(frozen, module = "govlab.governors", name = "IdleState")]
pub(crate) struct IdleStateView {
    /// Index in the CPU's table; 0 is the shallowest.
    #[pyo3(get)]
    index: usize,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    desc: String,
    #[pyo3(get)]
    exit_latency_ns: u64,
    #[pyo3(get)]
    target_residency_ns: u64,
    #[pyo3(get)]
    power_mw: f64,
    /// The CPU spins instead of halting (POLL).
    #[pyo3(get)]
    polling: bool,
}

#[pymethods]
impl IdleStateView {
    fn __repr__(&self) -> String {
        format!(
            "<IdleState {} {} exit_latency={} ns target_residency={} ns>",
            self.index, self.name, self.exit_latency_ns, self.target_residency_ns
        )
    }
}

/// A CPU's idle device as a Python governor sees it: the states, which are
/// disabled, and the rest of what the idle loop knows at this call.
///
/// One object per CPU for the whole run, refreshed before each call.
#[pyclass(unsendable, module = "govlab.governors", name = "IdleDevice")]
pub(crate) struct IdleDeviceView {
    #[pyo3(get)]
    cpu: usize,
    /// The CPU's idle states (IdleState objects), shallowest first.
    #[pyo3(get)]
    states: Py<PyTuple>,
    /// Per state: disabled through sysfs (never choose one).
    #[pyo3(get)]
    disabled: Py<PyTuple>,
    disabled_now: Vec<bool>,
    /// At select: the time of the call, ns.
    #[pyo3(get)]
    now_ns: u64,
    /// At select: time to the next event if the tick is kept (delta_tick), ns.
    #[pyo3(get)]
    delta_tick_ns: u64,
    #[pyo3(get)]
    tick_ns: u64,
    /// At select: tasks that slept on this CPU waiting for IO.
    #[pyo3(get)]
    nr_iowait: u32,
    /// At select: CPU utilisation and capacity.
    #[pyo3(get)]
    util: u64,
    #[pyo3(get)]
    capacity: u64,
    /// At reflect: the polling state left on its time limit.
    #[pyo3(get)]
    poll_time_limit: bool,
    /// At reflect: the wakeup was the scheduler tick.
    #[pyo3(get)]
    got_tick: bool,
}

impl IdleDeviceView {
    fn new(py: Python<'_>, dev: &IdleDevice<'_>) -> PyResult<Self> {
        let states = dev
            .states
            .iter()
            .enumerate()
            .map(|(index, s): (usize, &IdleState)| {
                Py::new(
                    py,
                    IdleStateView {
                        index,
                        name: s.name.clone(),
                        desc: s.desc.clone(),
                        exit_latency_ns: s.exit_latency_ns,
                        target_residency_ns: s.target_residency_ns,
                        power_mw: s.power_mw,
                        polling: s.polling,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(IdleDeviceView {
            cpu: dev.cpu,
            states: tuple(py, states)?,
            disabled: tuple(py, dev.disabled.iter().copied())?,
            disabled_now: dev.disabled.to_vec(),
            now_ns: 0,
            delta_tick_ns: 0,
            tick_ns: 0,
            nr_iowait: 0,
            util: 0,
            capacity: 0,
            poll_time_limit: false,
            got_tick: false,
        })
    }

    fn refresh_disabled(&mut self, py: Python<'_>, disabled: &[bool]) -> PyResult<()> {
        if self.disabled_now != disabled {
            self.disabled = tuple(py, disabled.iter().copied())?;
            self.disabled_now = disabled.to_vec();
        }
        Ok(())
    }
}

#[pymethods]
impl IdleDeviceView {
    fn __repr__(&self) -> String {
        format!("<IdleDevice cpu={} states={}>", self.cpu, self.disabled_now.len())
    }
}

/// A Python cpuidle governor object behind the engine's trait.
pub(crate) struct PyCpuidle {
    who: Who,
    enable: PyObject,
    select: PyObject,
    reflect: PyObject,
    tunables: Vec<(String, String)>,
    /// One view per CPU, made at enable.
    devs: Vec<Option<Py<IdleDeviceView>>>,
    /// Per CPU: when the current idle period began (reflect has no time).
    entry_ns: Vec<u64>,
    failed: bool,
    error: Option<Error>,
}

/// The factory for a run: `name` stands for the governor in messages and
/// the result; `gov` is the Python object.
pub(crate) fn factory(name: String, gov: PyObject) -> CpuidleFactory {
    Box::new(move |ctx| {
        Python::with_gil(|py| {
            let who = Who::new("cpuidle", &name);
            let g = gov.bind(py);
            let tunables = init(py, &who, g, ctx)?;
            let lookup = |attr: &str| method(g, attr).map_err(|e| who.exception(py, attr, 0, &e));
            Ok(Box::new(PyCpuidle {
                enable: lookup("enable")?,
                select: lookup("select")?,
                reflect: lookup("reflect")?,
                who,
                tunables,
                devs: Vec::new(),
                entry_ns: vec![0; ctx.platform.nr_cpus()],
                failed: false,
                error: None,
            }) as Box<dyn CpuidleGovernor>)
        })
    })
}

impl PyCpuidle {
    fn fail(&mut self, e: Error) {
        self.failed = true;
        self.error = Some(e);
    }

    fn dev(&self, py: Python<'_>, cpu: usize) -> Py<IdleDeviceView> {
        match self.devs.get(cpu) {
            Some(Some(d)) => d.clone_ref(py),
            _ => panic!("cpuidle governor {}: CPU {cpu} used before enable", self.who.name),
        }
    }

    fn select_py(&mut self, py: Python<'_>, dev: &IdleDevice<'_>, args: &SelectArgs) -> Result<Selection, Error> {
        let view = self.dev(py, dev.cpu);
        let view = view.bind(py);
        {
            let mut v = view.borrow_mut();
            v.refresh_disabled(py, dev.disabled).map_err(|e| self.who.exception(py, "select", args.now_ns, &e))?;
            v.now_ns = args.now_ns;
            v.delta_tick_ns = args.delta_tick_ns;
            v.tick_ns = args.tick_ns;
            v.nr_iowait = args.nr_iowait;
            v.util = args.cpu_util;
            v.capacity = args.cpu_capacity;
        }
        self.entry_ns[dev.cpu] = args.now_ns;
        let ret = self
            .select
            .call1(py, (view, args.sleep_length_ns, args.latency_req_ns, args.tick_stopped))
            .map_err(|e| self.who.exception(py, "select", args.now_ns, &e))?;
        self.selection(ret.bind(py), dev, args.now_ns)
    }

    /// What select returned: a state index, or (state, stop_tick), as
    /// the engine checks it.
    fn selection(&self, v: &Bound<'_, PyAny>, dev: &IdleDevice<'_>, now_ns: u64) -> Result<Selection, Error> {
        let (state, stop_tick) = selection_of(v).map_err(|why| self.who.error("select", now_ns, why))?;
        external::check_selection(dev, state, stop_tick).map_err(|why| self.who.error("select", now_ns, why))
    }
}

/// A state index (int), or a pair (state, stop_tick) of an int and a bool.
fn selection_of(v: &Bound<'_, PyAny>) -> Result<(i64, bool), String> {
    let expected = "expected a state index (int) or a pair (state, stop_tick)";
    let (state, stop_tick) = if v.is_instance_of::<PyTuple>() || v.is_instance_of::<PyList>() {
        let items: Vec<Bound<'_, PyAny>> = v.try_iter().and_then(Iterator::collect).map_err(|_| format!("returned {}; {expected}", shown(v)))?;
        let [state, stop] = items.as_slice() else {
            return Err(format!("returned {}; {expected}", shown(v)));
        };
        if !stop.is_instance_of::<PyBool>() {
            return Err(format!("returned stop_tick {}; expected True or False", shown(stop)));
        }
        (state.clone(), stop.is_truthy().unwrap_or(true))
    } else {
        (v.clone(), true)
    };
    int_of(&state).map(|s| (s, stop_tick)).ok_or_else(|| format!("returned {}; {expected}", shown(&state)))
}

impl CpuidleGovernor for PyCpuidle {
    fn name(&self) -> &'static str {
        self.who.name
    }

    fn enable(&mut self, dev: &IdleDevice<'_>) {
        if self.failed {
            return;
        }
        let outcome = Python::with_gil(|py| {
            let view = Py::new(py, IdleDeviceView::new(py, dev)?)?;
            if self.devs.len() <= dev.cpu {
                self.devs.resize_with(dev.cpu + 1, || None);
            }
            self.devs[dev.cpu] = Some(view.clone_ref(py));
            self.enable.call1(py, (view,)).map(drop)
        });
        if let Err(e) = outcome {
            let e = Python::with_gil(|py| self.who.exception(py, "enable", 0, &e));
            self.fail(e);
        }
    }

    fn select(&mut self, dev: &IdleDevice<'_>, args: &SelectArgs) -> Selection {
        if !self.failed {
            match Python::with_gil(|py| self.select_py(py, dev, args)) {
                Ok(sel) => return sel,
                Err(e) => self.fail(e),
            }
        }
        external::harmless_selection(dev)
    }

    fn reflect(&mut self, dev: &IdleDevice<'_>, r: &Reflection) {
        if self.failed {
            return;
        }
        let time_ns = self.entry_ns[dev.cpu] + r.residency_ns;
        let outcome = Python::with_gil(|py| {
            let view = self.dev(py, dev.cpu);
            {
                let mut v = view.borrow_mut(py);
                v.poll_time_limit = r.poll_time_limit;
                v.got_tick = r.got_tick;
            }
            self.reflect
                .call1(py, (view, r.state, r.residency_ns))
                .map(drop)
                .map_err(|e| self.who.exception(py, "reflect", time_ns, &e))
        });
        if let Err(e) = outcome {
            self.fail(e);
        }
    }

    fn tunables(&self) -> Vec<(String, String)> {
        self.tunables.clone()
    }

    fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }
}
