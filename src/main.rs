//! Thin entry point: parse the command line, run the command, map errors to exit codes.

use clap::Parser;

fn main() {
    let cli = fsbench::cli::Cli::parse();
    match fsbench::commands::dispatch(cli) {
        Ok(code) => std::process::exit(code),
        Err(err) => {
            fsbench::host::stdio::note(&format!("fsbench: error: {err}"));
            std::process::exit(err.exit_code());
        }
    }
}
