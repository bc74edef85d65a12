//! Mail spools: a maildir (`tmp/`, `new/`, `cur/`) as an MTA's local delivery and an IMAP
//! server use it.
//!
//! Delivery, by `deliverers` concurrent threads, is the maildir protocol's durable path:
//! write the message into `tmp/`, fsync it, rename it into `new/`, fsync `new/` (each
//! delivery's latency is one histogram sample). Then, with a cold cache where the caches can be
//! dropped, a reader takes every message from `new/`, reads it whole and moves it to `cur/`
//! as seen (`:2,S`); a share of them get a flag changed (a rename within `cur/`); a share are
//! expunged (unlinked, then `cur/` fsynced). Message sizes are seeded and log-uniform in three
//! bands: mostly text (1–8 KiB), some with small attachments (8–100 KiB), a few large ones
//! (100 KiB–1 MiB).

use super::{Gen, RemoveOnDrop, ms};
use crate::Error;
use crate::measure::LatencyHistogram;
use crate::metrics::registry as m;
use crate::workload::{Metric, WorkloadOutput};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

/// A mail workload's sizes (plan-file keys of `kind = "maildir"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MailParams {
    /// Messages delivered.
    pub messages: u32,
    /// Concurrent deliverers.
    pub deliverers: u32,
    /// Share of the read messages whose flags change afterwards (0–1).
    pub flag_share: f64,
    /// Share of the read messages expunged (0–1).
    pub expunge_share: f64,
}

impl Default for MailParams {
    /// 4,000 messages (≈ 100 MiB) by 4 deliverers; half flagged, a third expunged.
    fn default() -> Self {
        MailParams {
            messages: 4_000,
            deliverers: 4,
            flag_share: 0.5,
            expunge_share: 0.3,
        }
    }
}

impl MailParams {
    /// Take its keys out of a plan file's table (what is missing keeps its value).
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        let count = |t: &mut toml::Table, key: &str, max: i64| -> Result<Option<u32>, String> {
            t.remove(key)
                .map(|v| {
                    v.as_integer()
                        .filter(|n| (1..=max).contains(n))
                        .map(|n| n as u32)
                        .ok_or_else(|| {
                            format!("{key} must be a whole number from 1 to {max}, not {v}")
                        })
                })
                .transpose()
        };
        let share = |t: &mut toml::Table, key: &str| -> Result<Option<f64>, String> {
            t.remove(key)
                .map(|v| {
                    v.as_float()
                        .or_else(|| v.as_integer().map(|i| i as f64))
                        .filter(|f| (0.0..=1.0).contains(f))
                        .ok_or_else(|| {
                            format!("{key} must be a share from 0 to 1 (0.5 is half), not {v}")
                        })
                })
                .transpose()
        };
        if let Some(n) = count(t, "messages", 10_000_000)? {
            self.messages = n;
        }
        if let Some(n) = count(t, "deliverers", 256)? {
            self.deliverers = n;
        }
        if let Some(f) = share(t, "flag_share")? {
            self.flag_share = f;
        }
        if let Some(f) = share(t, "expunge_share")? {
            self.expunge_share = f;
        }
        Ok(())
    }
}

/// A message size from the three bands.
fn message_size(g: &mut Gen) -> usize {
    let band = g.below(100);
    let (lo, hi) = if band < 70 {
        (1 << 10, 8 << 10)
    } else if band < 97 {
        (8 << 10, 100 << 10)
    } else {
        (100 << 10, 1 << 20)
    };
    g.log_uniform(lo, hi) as usize
}

fn fsync_dir(dir: &Path) -> crate::Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("cannot fsync the directory", dir, e))
}

/// One deliverer: `n` messages named `<seq>.D<who>.fsbench`, each durable before the next.
fn deliver(maildir: &Path, who: u32, n: u32, seed: u64) -> crate::Result<(LatencyHistogram, u64)> {
    let mut g = Gen::new(seed ^ u64::from(who).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut hist = LatencyHistogram::new();
    let (tmp, new) = (maildir.join("tmp"), maildir.join("new"));
    let mut body = Vec::new();
    let mut bytes = 0;
    for seq in 0..n {
        if seq % 64 == 0 {
            crate::cancel::check()?;
        }
        body.clear();
        let size = message_size(&mut g);
        write!(
            body,
            "Return-Path: <sender{seq}@example.org>\nFrom: sender{seq}@example.org\n\
             To: user@example.org\nSubject: message {seq} of deliverer {who}\n\n"
        )
        .expect("writing to a Vec");
        g.text(size.saturating_sub(body.len()), &mut body);
        let name = format!("{seq}.D{who}.fsbench");
        let (t, dst) = (tmp.join(&name), new.join(&name));
        let start = Instant::now();
        let mut f = File::create(&t).map_err(|e| Error::io("cannot create", &t, e))?;
        f.write_all(&body)
            .and_then(|_| f.sync_all())
            .map_err(|e| Error::io("cannot write and fsync", &t, e))?;
        drop(f);
        std::fs::rename(&t, &dst).map_err(|e| Error::io("cannot rename into new/", &dst, e))?;
        fsync_dir(&new)?;
        hist.record(start.elapsed().as_nanos() as u64);
        bytes += body.len() as u64;
    }
    Ok((hist, bytes))
}

/// The whole workload in `dir/maildir`, which is removed afterwards.
pub fn run(dir: &Path, p: &MailParams, id: &str, seed: u64) -> crate::Result<WorkloadOutput> {
    let maildir = dir.join("maildir");
    let _ = std::fs::remove_dir_all(&maildir);
    let _cleanup = RemoveOnDrop(maildir.clone());
    for sub in ["tmp", "new", "cur"] {
        let d = maildir.join(sub);
        std::fs::create_dir_all(&d).map_err(|e| Error::io("cannot create", &d, e))?;
    }
    fsync_dir(&maildir)?;
    let mut out = WorkloadOutput::default();
    let who = p.deliverers.min(p.messages).max(1);
    let start = Instant::now();
    let results: Vec<crate::Result<(LatencyHistogram, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..who)
            .map(|w| {
                let n = p.messages / who + u32::from(w < p.messages % who);
                let md = &maildir;
                s.spawn(move || deliver(md, w, n, seed))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::workload(id, "a deliverer panicked")))
            })
            .collect()
    });
    let deliver_s = start.elapsed().as_secs_f64();
    let mut hist = LatencyHistogram::new();
    let mut bytes = 0;
    for r in results {
        let (h, b) = r?;
        hist.merge(&h);
        bytes += b;
    }
    crate::host::sync_all();
    super::super::meta::drop_caches_or_note(id, &mut out.notes);
    // Reading: as an IMAP server does on login, every new message read and moved to cur/.
    let (new, cur) = (maildir.join("new"), maildir.join("cur"));
    let read_start = Instant::now();
    let mut names: Vec<String> = std::fs::read_dir(&new)
        .map_err(|e| Error::io("cannot list", &new, e))?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| Error::io("cannot list", &new, e))?;
    names.sort();
    let mut buf = Vec::new();
    for name in &names {
        let src = new.join(name);
        buf.clear();
        File::open(&src)
            .and_then(|mut f| f.read_to_end(&mut buf))
            .map_err(|e| Error::io("cannot read", &src, e))?;
        let dst = cur.join(format!("{name}:2,S"));
        std::fs::rename(&src, &dst).map_err(|e| Error::io("cannot move to cur/", &dst, e))?;
    }
    fsync_dir(&new)?;
    fsync_dir(&cur)?;
    let read_s = read_start.elapsed().as_secs_f64();
    // Flag changes: a rename within cur/ (seen → flagged and seen), then cur/ made durable.
    let mut g = Gen::new(seed ^ 0xF1A6);
    let flag_start = Instant::now();
    let mut flagged = 0u64;
    for name in &names {
        if g.unit() < p.flag_share {
            let (a, b) = (
                cur.join(format!("{name}:2,S")),
                cur.join(format!("{name}:2,FS")),
            );
            std::fs::rename(&a, &b).map_err(|e| Error::io("cannot rename", &a, e))?;
            flagged += 1;
        }
    }
    fsync_dir(&cur)?;
    let flag_s = flag_start.elapsed().as_secs_f64();
    // Expunge: unlink whatever flags the message has now.
    let expunge_start = Instant::now();
    let mut expunged = 0u64;
    for e in std::fs::read_dir(&cur).map_err(|e| Error::io("cannot list", &cur, e))? {
        let e = e.map_err(|e| Error::io("cannot list", &cur, e))?;
        if g.unit() < p.expunge_share {
            std::fs::remove_file(e.path())
                .map_err(|err| Error::io("cannot expunge", e.path(), err))?;
            expunged += 1;
        }
    }
    fsync_dir(&cur)?;
    let expunge_s = expunge_start.elapsed().as_secs_f64();
    crate::host::sync_all();
    let delivered = hist.count();
    let mut push = |id, unit: &str, v: f64| out.metrics.push(Metric::new(id, unit, v));
    push(
        m::DELIVERIES_PER_S,
        "deliveries/s",
        delivered as f64 / deliver_s.max(1e-9),
    );
    push(m::LAT_P99_MS, "ms", ms(hist.quantile(0.99)));
    push(m::LAT_MEAN_MS, "ms", hist.mean() / 1e6);
    push(m::LAT_P50_MS, "ms", ms(hist.quantile(0.5)));
    push(m::MAIL_READ_SECONDS, "s", read_s);
    push(m::MAIL_FLAG_SECONDS, "s", flag_s);
    push(m::MAIL_EXPUNGE_SECONDS, "s", expunge_s);
    push(m::SECONDS, "s", deliver_s);
    push(m::ENTRIES, "entries", delivered as f64);
    push(m::BYTES, "bytes", bytes as f64);
    out.notes.push(format!(
        "{delivered} messages delivered by {who} deliverers ({:.1} MiB), {flagged} flagged, {expunged} expunged",
        bytes as f64 / (1u64 << 20) as f64
    ));
    out.histograms.push(("delivery".into(), hist));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_spool_delivers_every_message_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = MailParams {
            messages: 40,
            deliverers: 3,
            ..MailParams::default()
        };
        let out = run(d.path(), &p, "maildir", 7).unwrap();
        let get = |id| out.metrics.iter().find(|x| x.metric == id).unwrap().value;
        assert_eq!(get(m::ENTRIES), 40.0);
        assert!(get(m::DELIVERIES_PER_S) > 0.0);
        assert!(get(m::BYTES) >= 40.0 * 1024.0);
        assert!(!d.path().join("maildir").exists());
    }

    #[test]
    fn sizes_follow_the_bands() {
        let mut g = Gen::new(1);
        let sizes: Vec<usize> = (0..10_000).map(|_| message_size(&mut g)).collect();
        let small = sizes.iter().filter(|&&s| s < 8 << 10).count();
        assert!((6_500..7_500).contains(&small), "{small}");
        assert!(sizes.iter().all(|&s| (1 << 10..=1 << 20).contains(&s)));
    }
}
