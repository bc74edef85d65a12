//! A quiet rank: under mpirun every rank shares the terminal, so ranks other than 0 write
//! nothing (IOR's and mdtest's way) except why they fail.

/// Stdout and stderr point at /dev/null; stderr is put back before this rank reports its
/// own failure, and a panic still says why.
pub struct Quiet {
    stderr: std::os::fd::OwnedFd,
}

impl Quiet {
    /// Silence this process; `None` (and nothing changed) when the descriptors cannot be
    /// redirected.
    pub fn install() -> Option<Quiet> {
        use std::os::fd::AsFd;
        let stderr = rustix::io::dup(std::io::stderr().as_fd()).ok()?;
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .ok()?;
        // A panic says why, too.
        let for_panics = rustix::io::dup(&stderr).ok()?;
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let _ = rustix::stdio::dup2_stderr(&for_panics);
            hook(info);
        }));
        rustix::stdio::dup2_stdout(&null).ok()?;
        rustix::stdio::dup2_stderr(&null).ok()?;
        Some(Quiet { stderr })
    }

    /// Put stderr back (this rank is about to say why it fails).
    pub fn restore(&self) {
        let _ = rustix::stdio::dup2_stderr(&self.stderr);
    }
}
