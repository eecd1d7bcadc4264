//! The `fslab` binary: parse, run, print the error chain, exit with the
//! contract's code. Everything else lives in the library so tests can call it.

use std::process::ExitCode;

fn main() -> ExitCode {
    fslab::cli::main()
}
