//! `fsbench completions` and `fsbench man`: generated from the live clap definitions, so
//! they list exactly the subcommands and flags `--help` shows.

use crate::cli::Cli;
use crate::cli::shell::{CompletionsArgs, ManArgs};
use crate::{Error, Result};
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

/// Print the completion script for the chosen shell.
pub fn completions(a: CompletionsArgs) -> Result<i32> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "fsbench", &mut out);
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = std::io::stdout().lock().write_all(&out);
    Ok(crate::error::EXIT_OK)
}

/// Print fsbench.1, or write every page into `--out-dir`.
pub fn man(a: ManArgs) -> Result<i32> {
    let cmd = Cli::command();
    match a.out_dir {
        None => {
            let page = render(cmd)?;
            let _ = std::io::stdout().lock().write_all(page.as_bytes());
        }
        Some(dir) => {
            for name in write_pages(cmd, &dir)? {
                println!("{}", dir.join(name).display());
            }
        }
    }
    Ok(crate::error::EXIT_OK)
}

/// Write `fsbench.1` and `fsbench-<sub>.1` for every (visible) subcommand into `dir`;
/// returns the file names written.
pub fn write_pages(cmd: clap::Command, dir: &Path) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let mut cmd = cmd;
    cmd.build();
    let mut written = Vec::new();
    let mut pending = vec![cmd];
    while let Some(c) = pending.pop() {
        let name = format!("{}.1", c.get_display_name().unwrap_or(c.get_name()));
        let path = dir.join(&name);
        std::fs::write(&path, render(c.clone())?)
            .map_err(|e| Error::io("cannot write", &path, e))?;
        written.push(name);
        pending.extend(
            c.get_subcommands()
                .filter(|s| !s.is_hide_set() && s.get_name() != "help")
                .cloned(),
        );
    }
    written.sort();
    Ok(written)
}

/// One man page as roff, in ASCII: every other character becomes groff's `\[uXXXX]`, so the
/// page renders the same with or without a UTF-8 preprocessor (`groff -man`, `man -l`).
fn render(cmd: clap::Command) -> Result<String> {
    let name = cmd.get_name().to_string();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut out)
        .map_err(|e| Error::Other(format!("cannot render the man page of {name}: {e}")))?;
    Ok(ascii_roff(&String::from_utf8_lossy(&out)))
}

fn ascii_roff(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            s.push(c);
        } else {
            s += &format!("\\[u{:04X}]", c as u32);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_becomes_groff_escapes() {
        assert_eq!(ascii_roff("a \u{2026} \u{d7}"), "a \\[u2026] \\[u00D7]");
    }
}
