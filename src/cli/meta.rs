//! Flags of `fsbench meta`.

use crate::plan::params as P;
use std::path::PathBuf;

/// Flags of `fsbench meta`: metadata and small-file workloads on an existing directory.
///
/// Everything happens inside DIR/fsbench-meta-<pid>, which is removed afterwards, also after
/// an error or Ctrl-C.
#[derive(Debug, Clone, clap::Args)]
pub struct MetaArgs {
    /// Existing directory on the filesystem to test.
    #[arg(long, value_name = "PATH", value_hint = clap::ValueHint::DirPath)]
    pub dir: PathBuf,

    /// Workloads to run, in order: untar, find-cold, rm-tree, smallfiles, fsmark.
    ///
    /// find-cold and rm-tree need a tree: without untar before them, fsbench extracts the
    /// corpus first (not measured, ~105,000 entries by default) and deletes it afterwards. To
    /// walk a tree that is already there instead, use --existing.
    #[arg(long, value_delimiter = ',', default_value = "untar,find-cold,rm-tree")]
    pub workload: Vec<String>,

    /// Walk DIR itself cold (find-cold only): nothing is extracted, created or deleted.
    ///
    /// This is how to measure a cold walk over your own data: caches are dropped, then every
    /// entry below DIR is stat-ed, as `find DIR -printf '%s\n'` does.
    #[arg(long, conflicts_with_all = ["corpus_file", "corpus_from"])]
    pub existing: bool,

    /// Copies of the synthetic corpus (~35,000 entries each).
    #[arg(long, default_value_t = 3, conflicts_with = "corpus_file", value_parser = P::CORPUS_COPIES.count_arg::<u32>(), help = P::CORPUS_COPIES.help())]
    pub corpus_copies: u32,

    /// Seed of the synthetic corpus.
    #[arg(long, default_value_t = 1, value_parser = P::SEED.count_arg::<u64>(), help = P::SEED.help())]
    pub corpus_seed: u64,

    /// Size factor of the synthetic corpus and of the smallfiles/fsmark file counts (quick runs).
    #[arg(long, default_value_t = 1.0, value_name = "X", value_parser = P::CORPUS_SCALE.real_arg(), help = P::CORPUS_SCALE.help())]
    pub corpus_scale: f64,

    /// Extract this tarball (e.g. from `fsbench corpus`) instead of the synthetic corpus.
    #[arg(long, value_name = "F.tar", conflicts_with = "corpus_from", value_hint = clap::ValueHint::FilePath)]
    pub corpus_file: Option<PathBuf>,

    /// Pack this real directory (e.g. /usr/share) and extract it --corpus-copies times.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub corpus_from: Option<PathBuf>,

    /// Threads for untar (copies in parallel), find-cold and rm-tree (parallel walk).
    #[arg(long, default_value_t = 1, value_parser = P::THREADS.count_arg::<usize>(), help = P::THREADS.help())]
    pub threads: usize,

    /// Files of the smallfiles workload (default 50,000 × corpus-scale).
    #[arg(long, value_name = "N", value_parser = P::SMALLFILES.count_arg::<u64>(), help = P::SMALLFILES.help())]
    pub smallfiles: Option<u64>,

    /// Directories of the smallfiles workload.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = P::SMALLFILES_DIRS.count_arg::<u64>(), help = P::SMALLFILES_DIRS.help())]
    pub smallfiles_dirs: u64,

    /// Writer threads of the fsmark workload.
    #[arg(long, default_value_t = 4, value_name = "N", value_parser = P::FSMARK_THREADS.count_arg::<usize>(), help = P::FSMARK_THREADS.help())]
    pub fsmark_threads: usize,

    /// Files per fsmark thread (default 10,000 × corpus-scale).
    #[arg(long, value_name = "N", value_parser = P::FSMARK_FILES.count_arg::<u64>(), help = P::FSMARK_FILES.help())]
    pub fsmark_files: Option<u64>,

    /// fsmark's fsync policy: none, file (fsync each file before close) or dir.
    #[arg(long, default_value = "file", value_name = "POLICY")]
    pub fsync: String,

    /// Run as one rank of an MPI job (under `mpirun`; needs a build with `--features mpi`).
    ///
    /// Every rank runs the workloads in its own DIR/fsbench-meta-r<rank>-<pid> (`%r`/`%h` in
    /// --dir are expanded too), all starting each workload together after a barrier; rank 0
    /// prints entries/s of all ranks over the common window.
    #[arg(long, conflicts_with = "existing")]
    pub mpi: bool,

    /// Print `{"samples":[{workload, metric, unit, value}, …]}` instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Where the run is recorded (`fsbench history`).
    #[command(flatten)]
    pub history: super::history::RecordArgs,
}
