//! CPU accounting over a window: this process (getrusage) and the whole system (/proc/stat).

use std::time::Duration;

/// CPU counters at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuSnapshot {
    /// Process user time.
    pub user: Duration,
    /// Process system time.
    pub sys: Duration,
    /// System-wide busy jiffies (everything but idle and iowait), summed over CPUs.
    pub system_busy: u64,
    /// System-wide total jiffies, summed over CPUs.
    pub system_total: u64,
}

/// CPU used between two snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuUsage {
    /// Process user seconds.
    pub user_s: f64,
    /// Process system seconds.
    pub sys_s: f64,
    /// System-wide utilisation, 0–1 of all CPUs.
    pub system_util: f64,
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000)
}

/// Read `/proc/stat`'s aggregate `cpu` line as (busy, total) jiffies.
fn proc_stat() -> (u64, u64) {
    let Ok(text) = std::fs::read_to_string("/proc/stat") else {
        return (0, 0);
    };
    let Some(line) = text.lines().find(|l| l.starts_with("cpu ")) else {
        return (0, 0);
    };
    // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already
    // inside user, so only the first eight fields count.
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = f.iter().sum();
    let idle = f.get(3).copied().unwrap_or(0) + f.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

impl CpuSnapshot {
    /// Take a snapshot now.
    pub fn now() -> Self {
        // RUSAGE_SELF covers all threads.
        let ru = crate::host::sys::rusage(libc::RUSAGE_SELF);
        let (system_busy, system_total) = proc_stat();
        CpuSnapshot {
            user: timeval(ru.ru_utime),
            sys: timeval(ru.ru_stime),
            system_busy,
            system_total,
        }
    }

    /// Usage from `self` (earlier) to `later`.
    pub fn usage_until(&self, later: &CpuSnapshot) -> CpuUsage {
        let total = later.system_total.saturating_sub(self.system_total);
        let busy = later.system_busy.saturating_sub(self.system_busy);
        CpuUsage {
            user_s: later.user.saturating_sub(self.user).as_secs_f64(),
            sys_s: later.sys.saturating_sub(self.sys).as_secs_f64(),
            system_util: if total == 0 {
                0.0
            } else {
                busy as f64 / total as f64
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burning_cpu_shows_up() {
        let a = CpuSnapshot::now();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let u = a.usage_until(&CpuSnapshot::now());
        assert!(u.user_s + u.sys_s > 0.0);
        assert!((0.0..=1.0).contains(&u.system_util));
    }
}
