//! Running fio so that a stop request reaches it.
//!
//! fio runs for as long as the job, so when fsbench is asked to stop (SIGTERM to fsbench alone,
//! or a test's [`crate::cancel::request`]) fio must be told too. It gets SIGINT, which makes it
//! end the job early and still print its JSON.

use crate::host::command::{OnCancel, ToolOutput, display, run_child};
use std::process::Command;
use std::time::Duration;

/// Run `argv` (fio …), forwarding a cancellation as SIGINT; kill it after `timeout`.
pub fn run(argv: &[String], timeout: Duration) -> crate::Result<ToolOutput> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    run_child(&mut cmd, &display(argv), timeout, OnCancel::Interrupt)
}

/// Like [`run`], with `cwd` as the working directory.
pub fn run_in(
    argv: &[String],
    cwd: &std::path::Path,
    timeout: Duration,
) -> crate::Result<ToolOutput> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(cwd);
    run_child(&mut cmd, &display(argv), timeout, OnCancel::Interrupt)
}
