//! Where a command's document goes: stdout, or `-o/--output FILE` (written atomically and
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
