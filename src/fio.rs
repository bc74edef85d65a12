//! fio as a cross-check backend: render a job as fio arguments, run fio, parse its JSON.
