//! Executes a plan: guards, signals, journal and resume, progress.
