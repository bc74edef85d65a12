//! One `vm-image` step: create the image with `qemu-img` in the data directory, serve it
//! through `qemu-storage-daemon`, drive it with the engine, and take it all down again.

use super::export::Export;
use super::{Format, Job, VmParams};
use crate::engine::{self, Backend, IoReport, JobSpec, RwMode};
use crate::host::command;
use crate::metrics::registry::{
    VM_AGING_WRITE_IOPS, VM_CLONE_BYTES, VM_CLONE_REFLINK, VM_CLONE_SECONDS, VM_CREATE_SECONDS,
    VM_EXTENTS_AFTER, VM_EXTENTS_BEFORE, VM_OVERLAY_BYTES, VM_OVERLAY_SECONDS,
    VM_SEQREAD_AFTER_MIB_S, VM_SEQREAD_BEFORE_MIB_S,
};
use crate::workload::{Metric, WorkloadContext, WorkloadOutput};
use crate::{Error, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a step needs besides its parameters.
pub struct RunSpec<'a> {
    /// Workload id (errors).
    pub id: &'a str,
    /// Virtual size of the image, bytes.
    pub image_size: u64,
    /// Measured time of the timed I/O jobs.
    pub runtime: Duration,
    /// Their warm-up.
    pub ramp: Duration,
    /// Longest wait for `qemu-img`.
    pub timeout: Duration,
}

/// Files of one step in the data directory, removed when it ends however it ends.
struct Files(Vec<PathBuf>);

impl Drop for Files {
    fn drop(&mut self) {
        for f in &self.0 {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Run the step `p` in `ctx.dir`.
pub fn run(ctx: &WorkloadContext, p: &VmParams, s: &RunSpec) -> Result<WorkloadOutput> {
    let image = ctx.dir.join(format!("{}.{}", s.id, p.format.driver()));
    let disk = ctx.dir.join(format!("{}.disk", s.id));
    let overlay = ctx.dir.join(format!("{}.overlay.qcow2", s.id));
    let clone = ctx.dir.join(format!("{}.clone", s.id));
    let _files = Files(vec![
        image.clone(),
        disk.clone(),
        overlay.clone(),
        clone.clone(),
    ]);
    let mut out = WorkloadOutput::default();
    let created = create(&image, p, s)?;
    out.metrics
        .push(Metric::new(VM_CREATE_SECONDS, "s", created));
    note_nocow(&image, &mut out);
    // O_DIRECT on the image as libvirt's cache=none does, where the filesystem allows it.
    let direct = opens_direct(&image);
    if !direct {
        out.notes.push(
            "the filesystem refuses O_DIRECT on the image: QEMU opens it buffered (cache.direct=off)"
                .into(),
        );
    }
    let mut export = Export::start(&image, p.format, &disk, direct)?;
    let base = JobSpec {
        filename: disk.clone(),
        direct: true,
        backend: Backend::IoUring,
        iodepth: p.iodepth,
        seed: Some(ctx.seed),
        // The engine's own device window only where the step writes nothing untimed first
        // (the runner counts the device around the whole step as for every writing kind).
        device: ctx
            .device
            .filter(|_| p.job == Job::Randwrite)
            .map(Path::to_path_buf),
        ..JobSpec::default()
    };
    match p.job {
        Job::Randwrite => {
            let r = timed(&base, RwMode::Randwrite, 4096, p.fsync_every, s)?;
            merge(&mut out, crate::workload::io::to_output(&r));
        }
        Job::Randread | Job::Mixed | Job::Seqread => {
            fill(&base)?;
            let (rw, bs, fsync) = match p.job {
                Job::Randread => (RwMode::Randread, 4096, 0),
                Job::Mixed => (RwMode::Randrw, 64 << 10, p.fsync_every),
                _ => (RwMode::Read, 1 << 20, 0),
            };
            let r = timed(&base, rw, bs, fsync, s)?;
            merge(&mut out, crate::workload::io::to_output(&r));
        }
        Job::Aging => {
            fill(&base)?;
            out.metrics.push(Metric::new(
                VM_EXTENTS_BEFORE,
                "extents",
                extents(&image)? as f64,
            ));
            out.metrics.push(Metric::new(
                VM_SEQREAD_BEFORE_MIB_S,
                "MiB/s",
                seq_read(&base)?,
            ));
            let mut writes = Vec::new();
            for pass in 0..p.age_passes {
                let r = engine::run(&JobSpec {
                    rw: RwMode::Randwrite,
                    bs: 4096,
                    fsync: p.fsync_every,
                    seed: Some(ctx.seed.wrapping_add(u64::from(pass) + 1)),
                    ..base.clone()
                })?;
                writes.push(r.write.iops);
            }
            let iops = writes.iter().sum::<f64>() / writes.len().max(1) as f64;
            out.metrics
                .push(Metric::new(VM_AGING_WRITE_IOPS, "IOPS", iops));
            out.metrics.push(Metric::new(
                VM_EXTENTS_AFTER,
                "extents",
                extents(&image)? as f64,
            ));
            out.metrics.push(Metric::new(
                VM_SEQREAD_AFTER_MIB_S,
                "MiB/s",
                seq_read(&base)?,
            ));
        }
        Job::Snapshot => {
            fill(&base)?;
            // The base must be closed before qemu-img opens it as a backing file.
            export.stop()?;
            let copies = Copies {
                image: &image,
                overlay: &overlay,
                clone: &clone,
            };
            snapshot(ctx.dir, &copies, p.format, s, &mut out)?;
        }
    }
    export.stop()?;
    Ok(out)
}

/// `qemu-img create` with the step's format and preallocation, timed.
fn create(image: &Path, p: &VmParams, s: &RunSpec) -> Result<f64> {
    let argv = command::argv(&[
        "qemu-img",
        "create",
        "-q",
        "-f",
        p.format.driver(),
        "-o",
        &format!("preallocation={}", p.prealloc.name()),
    ])
    .into_iter()
    .chain([image.display().to_string(), s.image_size.to_string()])
    .collect::<Vec<_>>();
    let t0 = Instant::now();
    command::run(&argv, s.timeout)?;
    Ok(t0.elapsed().as_secs_f64())
}

/// Whether the image file inherited `chattr +C` from the data directory (a nocow setup):
/// said in the notes, so a nocow result shows it was one.
fn note_nocow(image: &Path, out: &mut WorkloadOutput) {
    if let Ok(f) = std::fs::File::open(image)
        && let Ok(flags) = rustix::fs::ioctl_getflags(&f)
        && flags.contains(rustix::fs::IFlags::NOCOW)
    {
        out.notes
            .push("the image is nodatacow (chattr +C, inherited from the data directory)".into());
    }
}

fn opens_direct(image: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(image)
        .is_ok()
}

/// The whole image written once, sequentially in 1M blocks (an installed guest), untimed.
fn fill(base: &JobSpec) -> Result<()> {
    engine::run(&JobSpec {
        rw: RwMode::Write,
        bs: 1 << 20,
        iodepth: 4,
        ..base.clone()
    })
    .map(|_| ())
}

/// One pass of 1M sequential reads over the image, MiB/s.
fn seq_read(base: &JobSpec) -> Result<f64> {
    let r = engine::run(&JobSpec {
        rw: RwMode::Read,
        bs: 1 << 20,
        iodepth: 4,
        ..base.clone()
    })?;
    Ok(r.read.bw_bytes / f64::from(1 << 20))
}

/// The measured job: time-based, with the plan's runtime and ramp. No settle here: the
/// runner settles after the step and adds the device totals once.
fn timed(base: &JobSpec, rw: RwMode, bs: u64, fsync: u32, s: &RunSpec) -> Result<IoReport> {
    engine::run(&JobSpec {
        rw,
        bs,
        fsync,
        rwmixread: 70,
        runtime: Some(s.runtime),
        ramp: s.ramp,
        ..base.clone()
    })
}

fn merge(out: &mut WorkloadOutput, more: WorkloadOutput) {
    out.metrics.extend(more.metrics);
    out.histograms.extend(more.histograms);
    out.series.extend(more.series);
    out.notes.extend(more.notes);
}

/// Extents of the image file (FIEMAP, synced first).
fn extents(image: &Path) -> Result<usize> {
    let f = std::fs::File::open(image).map_err(|e| Error::io("cannot open", image, e))?;
    crate::host::sys::fiemap::fiemap(&f, image)?
        .map(|e| e.len())
        .ok_or_else(|| Error::Other(format!("{}: FIEMAP is not supported here", image.display())))
}

/// Free bytes of the filesystem holding `dir`, after syncing it (delayed allocation counted).
fn free_bytes(dir: &Path) -> Result<u64> {
    let d = std::fs::File::open(dir).map_err(|e| Error::io("cannot open", dir, e))?;
    let _ = rustix::fs::syncfs(&d);
    let v = rustix::fs::fstatvfs(&d).map_err(|e| Error::io("statvfs", dir, e.into()))?;
    Ok(v.f_bfree * v.f_frsize)
}

/// The image and the two copies the snapshot step makes of it.
struct Copies<'a> {
    image: &'a Path,
    overlay: &'a Path,
    clone: &'a Path,
}

/// A qcow2 overlay on the image (`qemu-img create -b`) and a clone of it: FICLONE where the
/// filesystem shares extents, else a full copy (what `cp --reflink=auto` gives). Time of
/// each and the space it took (the overlay's blocks; the clone's by free space before and
/// after, since shared extents are not the file's own).
fn snapshot(
    dir: &Path,
    c: &Copies<'_>,
    format: Format,
    s: &RunSpec,
    out: &mut WorkloadOutput,
) -> Result<()> {
    let (image, overlay, clone) = (c.image, c.overlay, c.clone);
    let mut argv = command::argv(&["qemu-img", "create", "-q", "-f", "qcow2", "-F"]);
    argv.push(format.driver().into());
    argv.push("-b".into());
    argv.push(image.display().to_string());
    argv.push(overlay.display().to_string());
    let t0 = Instant::now();
    command::run(&argv, s.timeout)?;
    out.metrics.push(Metric::new(
        VM_OVERLAY_SECONDS,
        "s",
        t0.elapsed().as_secs_f64(),
    ));
    let blocks = std::fs::metadata(overlay)
        .map_err(|e| Error::io("cannot stat", overlay, e))?
        .blocks();
    out.metrics.push(Metric::new(
        VM_OVERLAY_BYTES,
        "bytes",
        (blocks * 512) as f64,
    ));

    let before = free_bytes(dir)?;
    let src = std::fs::File::open(image).map_err(|e| Error::io("cannot open", image, e))?;
    let dst = std::fs::File::create(clone).map_err(|e| Error::io("cannot create", clone, e))?;
    let t0 = Instant::now();
    let reflinked = rustix::fs::ioctl_ficlone(&dst, &src).is_ok();
    if !reflinked {
        drop(dst);
        std::fs::copy(image, clone).map_err(|e| Error::io("cannot copy the image to", clone, e))?;
        let f = std::fs::File::open(clone).map_err(|e| Error::io("cannot open", clone, e))?;
        f.sync_all()
            .map_err(|e| Error::io("cannot fsync", clone, e))?;
        out.notes.push(
            "no reflink here (FICLONE refused): the clone is a full copy, as cp --reflink=auto makes"
                .into(),
        );
    }
    let seconds = t0.elapsed().as_secs_f64();
    let after = free_bytes(dir)?;
    out.metrics
        .push(Metric::new(VM_CLONE_SECONDS, "s", seconds));
    out.metrics.push(Metric::new(
        VM_CLONE_BYTES,
        "bytes",
        before.saturating_sub(after) as f64,
    ));
    out.metrics.push(Metric::new(
        VM_CLONE_REFLINK,
        "bool",
        if reflinked { 1.0 } else { 0.0 },
    ));
    Ok(())
}
