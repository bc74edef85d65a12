//! `fsbench record`: run a command, record its calls on files under a directory into a trace,
//! print the summary. The work is `workload::replay::record`; the summary is rendered in
//! `report::record`.

use crate::cli::record::RecordArgs;
use crate::error::{EXIT_FAILURE, EXIT_OK};
use crate::workload::replay::record::{RecordOptions, record};

/// Run `fsbench record`; returns the exit code: the command's failure is 1, an interrupt
/// 128 + the signal (the trace is written either way).
pub fn run(args: RecordArgs) -> crate::Result<i32> {
    let o = RecordOptions {
        root: args.root,
        out: args.out,
        anonymize: args.anonymize,
        name: args.name,
        command: args.command,
        pid: args.pid,
        duration: args.for_,
        capture: args.capture,
    };
    let done = record(&o)?;
    crate::host::stdio::out(&format!("{}\n", crate::report::record::summary(&done)));
    Ok(if done.interrupted {
        crate::cancel::exit_code()
    } else if done.exit == Some(0) {
        EXIT_OK
    } else {
        EXIT_FAILURE
    })
}
