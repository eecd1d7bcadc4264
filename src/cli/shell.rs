//! `fslab completions SHELL` and `fslab man`: shell completion scripts
//! and manual pages, generated from the same clap definitions that parse
//! the command line, so they never drift from it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, write_error};
use crate::error::{Error, Result};

/// Arguments of `fslab completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for (bash: save as
    /// /usr/local/share/bash-completion/completions/fslab).
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of `fslab man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write fslab.1 and a page per subcommand (fslab-map.1, ...) into DIR
    /// instead of printing fslab.1 to stdout (for example
    /// /usr/local/share/man/man1).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Run `fslab completions`.
pub fn completions(args: &CompletionsArgs) -> Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "fslab", &mut out);
    print_all(&out)
}

/// Run `fslab man`.
pub fn man(args: &ManArgs) -> Result<ExitCode> {
    match &args.dir {
        Some(dir) => {
            if !dir.is_dir() {
                return Err(Error::usage(format!("--dir {}: not a directory; make it first", dir.display())));
            }
            clap_mangen::generate_to(Cli::command(), dir).map_err(|e| Error::io(dir, "write man pages into", e))?;
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut out).map_err(|e| Error::failed(format!("render the man page: {e}")))?;
            print_all(&out)
        }
    }
}

fn print_all(bytes: &[u8]) -> Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|_| stdout.flush()) {
        write_error(e)?;
    }
    Ok(ExitCode::SUCCESS)
}
