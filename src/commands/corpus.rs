//! `fsbench corpus`: write the corpus as a tarball so other tools can be fed the same tree.

use crate::cli::corpus::CorpusArgs;
use crate::workload::meta::{Corpus, CorpusSpec};
use crate::{Error, Result};
use std::io::Write;

/// Run `fsbench corpus`; returns the exit code.
pub fn run(args: CorpusArgs) -> Result<i32> {
    let corpus = Corpus::build(&CorpusSpec {
        copies: args.copies,
        seed: args.seed,
        scale: args.scale,
        from_dir: args.from.clone(),
        file: None,
    })?;
    for n in corpus.notes() {
        eprintln!("fsbench: note: {n}");
    }
    let f = std::fs::File::create(&args.out)
        .map_err(|e| Error::io("--out: cannot create", &args.out, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let written = corpus.write_tar(&mut w)?;
    w.flush()
        .map_err(|e| Error::io("--out: cannot write", &args.out, e))?;
    eprintln!(
        "wrote {}: {} entries, {} file bytes, {} tar bytes",
        args.out.display(),
        corpus.entries(),
        corpus.bytes(),
        written
    );
    Ok(crate::error::EXIT_OK)
}
