//! Typed errors with context, and the exit codes they map to.
//!
//! Exit codes: 0 success, 1 a run or workload failed, 2 bad input or a refusal before anything
//! destructive happened, 3 `fsbench history check` found a regression, 128 + signal number when interrupted (130 Ctrl-C, 129 SIGHUP, 131 SIGQUIT,
//! 143 SIGTERM) after cleanup.

use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};

/// Exit code for success.
pub const EXIT_OK: i32 = 0;
/// Exit code when a command ran but failed (I/O error, tool failure, failed workload).
pub const EXIT_FAILURE: i32 = 1;
/// Exit code for bad input or a safety refusal; nothing was created or changed.
pub const EXIT_USAGE: i32 = 2;
/// Exit code of `fsbench history check` when a regression was found (the check itself
/// worked): distinct from 1 (the store failed) so cron and CI can tell them apart.
pub const EXIT_REGRESSION: i32 = 3;
/// Exit code after an interrupt that no signal caused (a signal gives 128 + its number).
pub const EXIT_INTERRUPTED: i32 = 130;

/// The first signal that asked to stop (0: none). It lives here, below `cancel` (which sets
/// it from its signal handler), because [`Error::Interrupted`]'s exit code is 128 + it.
static INTERRUPT_SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Record the signal that asked to stop; only the first one counts. Async-signal-safe (one
/// atomic compare-exchange): `cancel`'s handler calls it.
pub fn record_interrupt_signal(sig: i32) {
    let _ = INTERRUPT_SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
}

/// The signal that asked to stop (0 when none did).
pub fn interrupt_signal() -> i32 {
    INTERRUPT_SIGNAL.load(Ordering::SeqCst)
}

/// Exit code after an interrupt: 128 + the first signal's number, 130 when no signal did it.
pub fn interrupt_exit_code() -> i32 {
    match interrupt_signal() {
        0 => EXIT_INTERRUPTED,
        s => 128 + s,
    }
}

/// Every error fsbench reports. The message names the bad input and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag or plan value is invalid; `flag` names it (e.g. `--bs`).
    #[error("{flag}: {message}")]
    InvalidInput {
        /// The flag or key that was wrong.
        flag: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// A safety check refused to touch a device or path.
    #[error("refusing to use {path}: {reason}")]
    Refused {
        /// The device or path.
        path: PathBuf,
        /// Why, and how to override if that is possible.
        reason: String,
    },
    /// An I/O error on a named path.
    #[error("{action} {path}: {source}")]
    Io {
        /// What fsbench was doing ("cannot open", "cannot read").
        action: String,
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An external tool (mkfs, mount, zpool, fio…) failed or timed out.
    #[error("{tool} failed: {message}")]
    Tool {
        /// The command that failed, as the user would type it.
        tool: String,
        /// Its stderr or the reason (timeout, not found).
        message: String,
    },
    /// A workload did less than asked or found wrong data.
    #[error("{workload}: {message}")]
    Workload {
        /// Workload id.
        workload: String,
        /// What went wrong.
        message: String,
    },
    /// The user interrupted the run; resources were released.
    #[error("interrupted")]
    Interrupted,
    /// Anything else, with context.
    #[error("{0}")]
    Other(String),
}

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::InvalidInput { .. } | Error::Refused { .. } => EXIT_USAGE,
            Error::Interrupted => interrupt_exit_code(),
            _ => EXIT_FAILURE,
        }
    }

    /// Shorthand for [`Error::InvalidInput`].
    pub fn invalid(flag: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidInput {
            flag: flag.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Refused`].
    pub fn refused(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Refused {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(action: impl Into<String>, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            action: action.into(),
            path: path.into(),
            source,
        }
    }

    /// Shorthand for [`Error::Tool`].
    pub fn tool(tool: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Tool {
            tool: tool.into(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::Workload`].
    pub fn workload(workload: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Workload {
            workload: workload.into(),
            message: message.into(),
        }
    }
}
