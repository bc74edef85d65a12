//! Source trees and builds: real `git` on the filesystem under test.
//!
//! A repository is generated deterministically from the parameters by `git fast-import` of a
//! synthetic history (a tree of `.c`/`.h` files in nested directories, text-like contents with
//! log-uniform sizes; each commit rewrites, deletes and creates a few files, the change pattern
//! of a real project's log). It is generated once, outside the filesystem under test, into a
//! cache keyed by its parameters (`<scratch>/fsbench-cache-<uid>/git-<key>.git`; same parameters,
//! same repository), then every step clones it onto the filesystem under test and times:
//! clone (local, `--no-hardlinks`, so every object is copied), checkout across `revisions`
//! revisions from old to new, `git status` with a cold and a warm cache, `git gc`, and a
//! build-shaped step (read every source, write one object file per source and an archive of
//! them; nothing is compiled, so the CPU stays out of it).

use super::{Gen, RemoveOnDrop};
use crate::Error;
use crate::host::command::{OnCancel, run_child};
use crate::metrics::registry as m;
use crate::workload::{Metric, WorkloadOutput};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The repository's shape and the steps' sizes (plan-file keys of `kind = "git"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitParams {
    /// Files in the first commit's tree.
    pub files: u32,
    /// Commits in the history (the first adds the tree).
    pub commits: u32,
    /// Files each later commit touches (about 80 % rewritten, 10 % deleted, 10 % created).
    pub changes: u32,
    /// Revisions checked out, oldest first, ending at the newest.
    pub revisions: u32,
}

impl Default for GitParams {
    /// A mid-sized project: 20,000 files (≈ 95 MiB), 1,000 commits of 10 changed files each.
    fn default() -> Self {
        GitParams {
            files: 20_000,
            commits: 1_000,
            changes: 10,
            revisions: 10,
        }
    }
}

impl GitParams {
    /// The keys of a `[[workload]]` table, in order.
    pub const KEYS: [&'static str; 4] = ["files", "commits", "changes", "revisions"];

    /// Take its keys out of a plan file's table (what is missing keeps its value).
    pub fn take_from(&mut self, t: &mut toml::Table) -> Result<(), String> {
        for key in Self::KEYS {
            if let Some(v) = t.remove(key) {
                let n = v
                    .as_integer()
                    .filter(|n| (1..=10_000_000).contains(n))
                    .ok_or_else(|| {
                        format!("{key} must be a whole number from 1 to 10000000, not {v}")
                    })?;
                let n = n as u32;
                match key {
                    "files" => self.files = n,
                    "commits" => self.commits = n,
                    "changes" => self.changes = n,
                    _ => self.revisions = n,
                }
            }
        }
        if self.revisions >= self.commits {
            return Err(format!(
                "revisions ({}) must be fewer than commits ({}): each checkout moves across commits",
                self.revisions, self.commits
            ));
        }
        Ok(())
    }

    /// The cache key: the generator's version and every parameter that shapes the repository.
    fn key(&self) -> String {
        format!("v2-{}f-{}c-{}x", self.files, self.commits, self.changes)
    }
}

/// git with no system or user configuration and no automatic gc, so every setup runs the
/// same git the same way.
fn git(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", dir)
        .args(["-c", "gc.auto=0", "-c", "core.untrackedCache=false"])
        .args(args);
    c
}

/// Run git, return its stdout; killed on Ctrl-C.
fn run_git(dir: &Path, args: &[&str], timeout: Duration) -> crate::Result<String> {
    let shown = format!("git {}", args.join(" "));
    let out = run_child(&mut git(dir, args), &shown, timeout, OnCancel::Kill)?;
    if out.status != Some(0) {
        return Err(Error::tool(shown, out.combined().trim().to_string()));
    }
    Ok(out.stdout)
}

/// The repository cache under `scratch`: one per user, since git refuses a repository another
/// user owns and a user cannot add to another's cache (`fsbench-cache-<uid>`).
pub fn cache_dir(scratch: &Path) -> PathBuf {
    scratch.join(format!(
        "fsbench-cache-{}",
        rustix::process::geteuid().as_raw()
    ))
}

/// The source repository for `p` in `cache`, generated when it is not there yet. Generation
/// goes into a directory of this process's own and is renamed into place when complete, so a
/// killed generation never leaves a repository that looks finished; its leftovers are removed
/// by the next generation.
pub fn source_repo(cache: &Path, p: &GitParams, timeout: Duration) -> crate::Result<PathBuf> {
    let done = cache.join(format!("git-{}.git", p.key()));
    if done.join("HEAD").is_file() {
        return Ok(done);
    }
    std::fs::create_dir_all(cache)
        .map_err(|e| Error::io("cannot create the repository cache", cache, e))?;
    remove_dead_partials(cache);
    let partial = cache.join(format!(".partial-{}-{}", std::process::id(), p.key()));
    let _ = std::fs::remove_dir_all(&partial);
    let guard = RemoveOnDrop(partial.clone());
    std::fs::create_dir_all(&partial).map_err(|e| Error::io("cannot create", &partial, e))?;
    let stream = partial.join("history.fi");
    write_history(&stream, p).map_err(|e| Error::io("cannot write", &stream, e))?;
    let repo = partial.join("repo.git");
    run_git(
        &partial,
        &["init", "-q", "--bare", "-b", "main", "repo.git"],
        timeout,
    )?;
    let shown = "git fast-import";
    let mut c = Command::new("sh");
    c.current_dir(&repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "exec git fast-import --quiet < ../history.fi"]);
    let out = run_child(&mut c, shown, timeout, OnCancel::Kill)?;
    if out.status != Some(0) {
        return Err(Error::tool(shown, out.combined().trim().to_string()));
    }
    std::fs::rename(&repo, &done).map_err(|e| Error::io("cannot move into place", &done, e))?;
    drop(guard);
    Ok(done)
}

/// Partial generations of processes that are gone.
fn remove_dead_partials(cache: &Path) {
    let Ok(entries) = std::fs::read_dir(cache) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(".partial-")
            .and_then(|r| r.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// The path of file number `i`: nested directories of about 20 files each, like a project's
/// `src/` (two levels of 32 directories, then the file).
fn file_path(i: u64) -> String {
    let ext = if i.is_multiple_of(4) { "h" } else { "c" };
    format!("src/m{:02}/p{:02}/f{i}.{ext}", i % 32, (i / 32) % 32)
}

/// Write the fast-import stream of `p`'s history to `path`.
fn write_history(path: &Path, p: &GitParams) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut g = Gen::new(0x6769_7421 ^ u64::from(p.files) << 20 ^ u64::from(p.commits));
    let mut live: Vec<u64> = (0..u64::from(p.files)).collect();
    let mut next_file = u64::from(p.files);
    let mut body = Vec::new();
    let mut blob = |g: &mut Gen, out: &mut std::io::BufWriter<std::fs::File>, path: &str| {
        body.clear();
        let size = g.log_uniform(200, 24 * 1024) as usize;
        g.text(size, &mut body);
        write!(out, "M 100644 inline {path}\ndata {}\n", body.len())?;
        out.write_all(&body)?;
        out.write_all(b"\n")
    };
    for c in 0..p.commits {
        let when = 1_600_000_000 + u64::from(c) * 3600;
        let msg = format!("commit {c}");
        write!(
            out,
            "commit refs/heads/main\nmark :{}\nauthor Dev <dev@example.org> {when} +0000\n\
             committer Dev <dev@example.org> {when} +0000\ndata {}\n{msg}\n",
            c + 1,
            msg.len()
        )?;
        if c > 0 {
            writeln!(out, "from :{c}")?;
        }
        if c == 0 {
            for &i in &live {
                blob(&mut g, &mut out, &file_path(i))?;
            }
            continue;
        }
        for _ in 0..p.changes {
            let roll = g.below(10);
            if roll == 0 && live.len() > 1 {
                let at = g.below(live.len() as u64) as usize;
                writeln!(out, "D {}", file_path(live.swap_remove(at)))?;
            } else if roll == 1 {
                live.push(next_file);
                blob(&mut g, &mut out, &file_path(next_file))?;
                next_file += 1;
            } else {
                let i = live[g.below(live.len() as u64) as usize];
                blob(&mut g, &mut out, &file_path(i))?;
            }
        }
    }
    out.flush()
}

/// Time `f` in seconds.
fn timed<T>(f: impl FnOnce() -> crate::Result<T>) -> crate::Result<(f64, T)> {
    let t = Instant::now();
    let v = f()?;
    Ok((t.elapsed().as_secs_f64(), v))
}

/// Every step on a clone of `source` in `dir/git`, which is removed afterwards.
pub fn run(
    dir: &Path,
    source: &Path,
    p: &GitParams,
    id: &str,
    timeout: Duration,
) -> crate::Result<WorkloadOutput> {
    let base = dir.join("git");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).map_err(|e| Error::io("cannot create", &base, e))?;
    let _cleanup = RemoveOnDrop(base.clone());
    let mut out = WorkloadOutput::default();
    let src = source.to_string_lossy().into_owned();
    let (clone_s, _) = timed(|| {
        run_git(
            &base,
            &["clone", "-q", "--no-hardlinks", &src, "work"],
            timeout,
        )?;
        crate::host::sync_all();
        Ok(())
    })?;
    let work = base.join("work");
    let mut checkout_s = 0.0;
    for r in 0..p.revisions {
        crate::cancel::check()?;
        // Oldest first: main~(commits-1)·(revisions-r)/revisions … main~0.
        let back =
            u64::from(p.commits - 1) * u64::from(p.revisions - 1 - r) / u64::from(p.revisions);
        let rev = format!("main~{back}");
        let (s, _) = timed(|| run_git(&work, &["checkout", "-q", "--detach", &rev], timeout))?;
        checkout_s += s;
    }
    crate::host::sync_all();
    // Checkpoint the journal first, so the cold status finds the metadata really evicted
    // (find-cold's reason: drop_caches cannot evict pinned journal buffers).
    if !matches!(crate::host::cache::checkpoint(&work), Ok(true)) {
        out.notes.push(format!(
            "{id}: the journal was not checkpointed; the cold git status may find metadata cached"
        ));
    }
    let cold = super::super::meta::drop_caches_or_note(id, &mut out.notes);
    let (status_first, _) = timed(|| run_git(&work, &["status", "--porcelain"], timeout))?;
    let (status_warm, _) = timed(|| run_git(&work, &["status", "--porcelain"], timeout))?;
    let (gc_s, _) = timed(|| {
        run_git(&work, &["gc", "-q"], timeout)?;
        crate::host::sync_all();
        Ok(())
    })?;
    crate::cancel::check()?;
    super::super::meta::drop_caches_or_note(id, &mut out.notes);
    let (build_s, objects) = timed(|| {
        let n = build(&work, &base.join("build"))?;
        crate::host::sync_all();
        Ok(n)
    })?;
    let mut push = |id, unit: &str, v: f64| out.metrics.push(Metric::new(id, unit, v));
    push(m::GIT_CLONE_SECONDS, "s", clone_s);
    push(m::GIT_CHECKOUT_SECONDS, "s", checkout_s);
    if cold {
        push(m::GIT_STATUS_COLD_SECONDS, "s", status_first);
    }
    push(m::GIT_STATUS_WARM_SECONDS, "s", status_warm);
    push(m::GIT_GC_SECONDS, "s", gc_s);
    push(m::BUILD_SECONDS, "s", build_s);
    push(m::ENTRIES, "entries", objects as f64);
    if build_s > 0.0 {
        push(m::BUILD_FILES_PER_S, "files/s", objects as f64 / build_s);
    }
    push(
        m::SECONDS,
        "s",
        clone_s + checkout_s + status_first + status_warm + gc_s + build_s,
    );
    Ok(out)
}

/// The build-shaped step: read every `.c` under `work/src`, write `build/<path>.o` (the
/// source's bytes, as many as a small object file has), then an archive `build/lib.a` of all
/// objects read back. Returns the number of objects.
fn build(work: &Path, build: &Path) -> crate::Result<u64> {
    let mut sources = Vec::new();
    walk(&work.join("src"), &mut sources)?;
    sources.sort();
    let mut objects = Vec::with_capacity(sources.len());
    let mut buf = Vec::new();
    for (n, s) in sources
        .iter()
        .filter(|s| s.extension().is_some_and(|e| e == "c"))
        .enumerate()
    {
        if n % 256 == 0 {
            crate::cancel::check()?;
        }
        buf.clear();
        std::fs::File::open(s)
            .and_then(|mut f| f.read_to_end(&mut buf))
            .map_err(|e| Error::io("cannot read", s, e))?;
        let rel = s.strip_prefix(work).unwrap_or(s);
        let obj = build.join(rel).with_extension("o");
        if let Some(parent) = obj.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
        }
        std::fs::write(&obj, &buf).map_err(|e| Error::io("cannot write", &obj, e))?;
        objects.push(obj);
    }
    let lib = build.join("lib.a");
    let mut ar = std::io::BufWriter::new(
        std::fs::File::create(&lib).map_err(|e| Error::io("cannot create", &lib, e))?,
    );
    for o in &objects {
        let bytes = std::fs::read(o).map_err(|e| Error::io("cannot read", o, e))?;
        ar.write_all(&bytes)
            .map_err(|e| Error::io("cannot write", &lib, e))?;
    }
    ar.flush().map_err(|e| Error::io("cannot write", &lib, e))?;
    Ok(objects.len() as u64 + 1)
}

/// Every file under `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> crate::Result<()> {
    for e in std::fs::read_dir(dir).map_err(|e| Error::io("cannot list", dir, e))? {
        let e = e.map_err(|e| Error::io("cannot list", dir, e))?;
        let path = e.path();
        if e.file_type()
            .map_err(|e| Error::io("cannot stat", &path, e))?
            .is_dir()
        {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_is_the_same_for_the_same_parameters() {
        let d = tempfile::tempdir().unwrap();
        let p = GitParams {
            files: 50,
            commits: 10,
            changes: 5,
            revisions: 3,
        };
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        write_history(&a, &p).unwrap();
        write_history(&b, &p).unwrap();
        let a = std::fs::read(a).unwrap();
        assert_eq!(a, std::fs::read(b).unwrap());
        let text = String::from_utf8_lossy(&a);
        assert_eq!(text.matches("commit refs/heads/main").count(), 10);
        assert!(text.matches("M 100644 inline").count() >= 50 + 9 * 4);
    }

    #[test]
    fn plan_keys_are_checked() {
        let mut p = GitParams::default();
        let mut t: toml::Table = toml::from_str("files = 10\ncommits = 5\nrevisions = 5").unwrap();
        assert!(
            p.take_from(&mut t)
                .unwrap_err()
                .contains("fewer than commits")
        );
        let mut t: toml::Table = toml::from_str("files = 0").unwrap();
        assert!(p.take_from(&mut t).unwrap_err().contains("files"));
    }
}
