//! Where a command's output goes: stdout, or `-o/--output FILE` (written atomically and
//! world-readable, as `fsbench report -o` does).

use std::io::Write;
use std::path::Path;

/// Print `doc` to stdout (a closed pipe such as `| head` is not an error), or write it to
/// `output` and say so on stderr.
pub fn emit(output: Option<&Path>, doc: &[u8]) -> crate::Result<()> {
    match output {
        None => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(doc).and_then(|_| out.flush());
        }
        Some(path) => {
            crate::report::write_shareable(path, doc)?;
            eprintln!("wrote {}", path.display());
        }
    }
    Ok(())
}

/// Print `text` to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub fn print(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// The refusal of `--mpi` by a build without the `mpi` feature (exit 2): the flag exists, so
/// it is discoverable, and says how to get it. Compiled in both builds so that its test runs in
/// CI's, which has the feature.
#[cfg_attr(feature = "mpi", allow(dead_code))]
pub(crate) fn without_mpi() -> crate::Error {
    crate::Error::invalid(
        "--mpi",
        "this fsbench was built without MPI; rebuild with `cargo build --release --features mpi` \
         (needs libopenmpi-dev and libclang) and launch with mpirun",
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_refusal_of_mpi_without_the_feature_is_exit_2_and_says_how_to_get_it() {
        let e = super::without_mpi();
        assert_eq!(e.exit_code(), 2);
        let text = e.to_string();
        assert!(
            text.contains("--mpi") && text.contains("--features mpi"),
            "{text}"
        );
    }
}
