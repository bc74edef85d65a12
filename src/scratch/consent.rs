//! Consent before a device is wiped: `--yes`, or the device name typed at the terminal.
//!
//! The question is asked on the controlling terminal (`/dev/tty`), never on stdin: stdin may be
//! a pipe or a here-document, and `echo sdb | fsbench run --device /dev/sdb` must not count as
//! someone having read the warning. Without a terminal and without `--yes` the run is refused
//! before anything is opened for writing — mkfs's habit of not asking when there is no
//! terminal is exactly the trap fsbench exists to avoid. `--force-wipe` is about signatures and
//! never stands in for consent.

use crate::{Error, Result};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// Where the question is asked.
const TTY: &str = "/dev/tty";

/// The refusal when there is nobody to ask: one line naming the device and the way out.
fn no_terminal(path: &Path) -> Error {
    Error::refused(
        path,
        "wiping it needs confirmation and there is no terminal to ask on; pass --yes to \
         confirm non-interactively",
    )
}

/// The controlling terminal, opened for the question, or `None` when the process has none.
fn terminal() -> Option<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(TTY)
        .ok()
}

/// Refuse at once when consent can be neither given (`yes`) nor asked (no terminal).
///
/// Called before the plan is printed, so a script without `--yes` stops with one line and
/// before any safety check or write.
pub fn preflight(path: &Path, yes: bool) -> Result<()> {
    if yes || terminal().is_some() {
        Ok(())
    } else {
        Err(no_terminal(path))
    }
}

/// What the user is about to erase, shown in the question.
pub struct Question<'a> {
    /// The path as given (`/dev/disk/by-id/…` or `/dev/sdb`).
    pub path: &'a Path,
    /// Its kernel name (`sdb`), the answer expected.
    pub name: &'a str,
    /// Size and model, for the warning line.
    pub description: String,
}

/// Whether a typed answer names the device: its kernel name, `/dev/<name>`, or the path given.
pub fn answer_matches(typed: &str, q: &Question<'_>) -> bool {
    let typed = typed.trim();
    !typed.is_empty()
        && (typed == q.name || Path::new(typed) == q.path || typed == format!("/dev/{}", q.name))
}

/// Get consent: `yes` gives it; otherwise ask on the terminal and compare the typed name.
///
/// A wrong name, an empty line and end-of-file all refuse (exit 2), naming what was typed.
pub fn confirm(q: &Question<'_>, yes: bool) -> Result<()> {
    if yes {
        return Ok(());
    }
    let Some(tty) = terminal() else {
        return Err(no_terminal(q.path));
    };
    let mut out = &tty;
    write!(
        out,
        "fsbench will ERASE ALL DATA on {} ({}).\nType the device name ({}) to continue: ",
        q.path.display(),
        q.description,
        q.name
    )
    .and_then(|()| out.flush())
    .map_err(|e| Error::io("cannot ask for confirmation on", TTY, e))?;
    let mut line = String::new();
    let n = BufReader::new(&tty)
        .read_line(&mut line)
        .map_err(|e| Error::io("cannot read the confirmation from", TTY, e))?;
    if n == 0 {
        // End of input (Ctrl-D): move off the prompt line so the error starts on its own.
        let _ = writeln!(out);
        return Err(Error::refused(
            q.path,
            "no confirmation was typed (end of input); nothing was changed (--yes skips this \
             question)",
        ));
    }
    if answer_matches(&line, q) {
        return Ok(());
    }
    let typed = line.trim();
    let what = if typed.is_empty() {
        "an empty line was typed".to_string()
    } else {
        format!("typed {typed:?}")
    };
    Err(Error::refused(
        q.path,
        format!(
            "the confirmation did not match ({what}, expected {:?}); nothing was changed \
             (--yes skips this question)",
            q.name
        ),
    ))
}

/// Whether a typed answer names every device of `qs`, each once, in any order (separated by
/// spaces or commas), as [`answer_matches`] reads one name.
pub fn answers_match_all(typed: &str, qs: &[Question<'_>]) -> bool {
    let words: Vec<&str> = typed
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    words.len() == qs.len()
        && qs
            .iter()
            .all(|q| words.iter().filter(|w| answer_matches(w, q)).count() == 1)
}

/// One consent for several devices (`--device A --device B`): `yes` gives it; otherwise the
/// question lists every device and all their names must be typed.
pub fn confirm_all(qs: &[Question<'_>], yes: bool) -> Result<()> {
    if qs.len() == 1 {
        return confirm(&qs[0], yes);
    }
    if yes {
        return Ok(());
    }
    let first = qs.first().map_or(Path::new(TTY), |q| q.path);
    let Some(tty) = terminal() else {
        return Err(no_terminal(first));
    };
    let mut out = &tty;
    let mut text = format!(
        "fsbench will ERASE ALL DATA on these {} devices:\n",
        qs.len()
    );
    for q in qs {
        text.push_str(&format!("  {} ({})\n", q.path.display(), q.description));
    }
    let names: Vec<&str> = qs.iter().map(|q| q.name).collect();
    text.push_str(&format!(
        "Type all their names ({}) to continue: ",
        names.join(" ")
    ));
    write!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("cannot ask for confirmation on", TTY, e))?;
    let mut line = String::new();
    let n = BufReader::new(&tty)
        .read_line(&mut line)
        .map_err(|e| Error::io("cannot read the confirmation from", TTY, e))?;
    if n == 0 {
        let _ = writeln!(out);
        return Err(Error::refused(
            first,
            "no confirmation was typed (end of input); nothing was changed (--yes skips this \
             question)",
        ));
    }
    if answers_match_all(&line, qs) {
        return Ok(());
    }
    Err(Error::refused(
        first,
        format!(
            "the confirmation did not name every device once (typed {:?}, expected {:?}); \
             nothing was changed (--yes skips this question)",
            line.trim(),
            names.join(" ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let q = Question {
            path: Path::new("/dev/disk/by-id/usb-x"),
            name: "sdb",
            description: String::new(),
        };
        for ok in ["sdb", " sdb\n", "/dev/sdb", "/dev/disk/by-id/usb-x"] {
            assert!(answer_matches(ok, &q), "{ok:?}");
        }
        for bad in ["", "\n", "sda", "y", "yes", "/dev/sdb1", "sd"] {
            assert!(!answer_matches(bad, &q), "{bad:?}");
        }
    }

    #[test]
    fn every_device_must_be_named_once() {
        let qs = [
            Question {
                path: Path::new("/dev/sdb"),
                name: "sdb",
                description: String::new(),
            },
            Question {
                path: Path::new("/dev/sdc"),
                name: "sdc",
                description: String::new(),
            },
        ];
        for ok in ["sdb sdc", "sdc,/dev/sdb\n", " /dev/sdb  sdc "] {
            assert!(answers_match_all(ok, &qs), "{ok:?}");
        }
        for bad in ["", "sdb", "sdb sdb", "sdb sdc sdd", "yes"] {
            assert!(!answers_match_all(bad, &qs), "{bad:?}");
        }
        confirm_all(&qs, true).unwrap();
    }

    #[test]
    fn yes_needs_no_terminal() {
        let q = Question {
            path: Path::new("/dev/sdz"),
            name: "sdz",
            description: String::new(),
        };
        confirm(&q, true).unwrap();
        preflight(Path::new("/dev/sdz"), true).unwrap();
    }
}
