//! Flags of `fsbench completions` and `fsbench man`.

use std::path::PathBuf;

/// Flags of `fsbench completions`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = "\
Install (one line per shell):
  bash:       fsbench completions bash > /etc/bash_completion.d/fsbench
  zsh:        fsbench completions zsh > \"${fpath[1]}/_fsbench\"
  fish:       fsbench completions fish > ~/.config/fish/completions/fsbench.fish
  elvish:     fsbench completions elvish >> ~/.config/elvish/rc.elv
  powershell: fsbench completions powershell >> $PROFILE")]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Flags of `fsbench man`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_long_help = "\
Examples:
  fsbench man | man -l -
  sudo fsbench man --out-dir /usr/local/share/man/man1 && mandb -q")]
pub struct ManArgs {
    /// Write fsbench.1 and fsbench-SUBCOMMAND.1 for every subcommand into this directory
    /// (created if missing) instead of printing fsbench.1 to stdout.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub out_dir: Option<PathBuf>,
}
