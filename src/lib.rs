//! fslab: a laboratory for file-system layout and write-path performance.
//!
//! The crate is layered so that arrows only point down (`docs/DESIGN.md`
//! draws it, and `tests/layering.rs` holds the code to it):
//! `cli` → `report` → `compare` → `store` → `record`, and
//! `cli` → `plan` → `harness` → `scenario` → `probe` → `site` →
//! `age_cache` → `ledger` → `layout` → `sys`. `record` (the results model:
//! plain data), `error`, `units`, `text` and `interrupt` are the foundation
//! any layer may use; `progress` (how a run says how it goes) is used by
//! `harness` and by the lock waits of `site` and `ledger`.
//! Unsafe code lives in `sys` only, behind safe functions; the crate
//! denies it everywhere else.

#![deny(unsafe_code)]

/// The JSON schema name every `--json` output carries (and a stored run's
/// JSON export).
pub const SCHEMA: &str = "fslab/1";

/// fslab's version with the git commit it was built from (`build.rs`;
/// "unknown" outside a git checkout): `0.1.0 (3f2a9c1)`. Two builds of one
/// version differ in what they measure, so the commit says which ran.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("FSLAB_GIT_COMMIT"), ")");

/// `{"schema":"fslab/1","KEY":VALUE}`, pretty, with a final newline: the
/// shape of every `--json` output.
pub fn json_document<T: serde::Serialize + ?Sized>(key: &str, value: &T) -> Vec<u8> {
    struct Document<'a, T: ?Sized> {
        key: &'a str,
        value: &'a T,
    }
    impl<T: serde::Serialize + ?Sized> serde::Serialize for Document<'_, T> {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = serializer.serialize_map(Some(2))?;
            map.serialize_entry("schema", SCHEMA)?;
            map.serialize_entry(self.key, self.value)?;
            map.end()
        }
    }
    let mut out = serde_json::to_vec_pretty(&Document { key, value }).expect("plain data serialises");
    out.push(b'\n');
    out
}

// The test helpers shared with the integration tests (tests/common) name
// the library `fslab::`, as that crate must; this makes the name good here.
#[cfg(test)]
extern crate self as fslab;

// The names of the tests' folders in /var/tmp: the integration tests'
// helper, compiled into the unit tests too (one prefix for the suite).
#[cfg(test)]
#[path = "../tests/common/temp.rs"]
pub(crate) mod test_temp;

/// `eprintln!` for the whole crate, shadowing the standard one in every
/// module (a `macro_rules!` defined before the modules wins over the
/// prelude's). The standard macro panics when stderr is a closed pipe
/// (`fslab frag / 2>&1 | head`: EPIPE), which killed fslab with exit 101 —
/// mid-run, as root, with its mounts and sysctls left for `cleanup`. This
/// one drops a line nobody can read and goes on
/// ([`error::to_stderr`]).
macro_rules! eprintln {
    () => {
        $crate::error::to_stderr(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::error::to_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` likewise: never panics on a closed stderr.
#[allow(unused_macros)]
macro_rules! eprint {
    ($($arg:tt)*) => {
        $crate::error::to_stderr(format_args!($($arg)*))
    };
}

pub mod age;
pub mod age_cache;
pub mod bisect;
pub mod cli;
pub mod compare;
pub mod crash;
pub mod distro;
pub mod error;
pub mod harness;
pub mod history;
pub mod layout;
pub mod plan;
pub mod interrupt;
pub mod ledger;
pub mod model;
pub mod probe;
pub mod progress;
pub mod record;
pub mod report;
pub mod scenario;
pub mod site;
pub mod store;
#[allow(unsafe_code)]
pub mod sys;
pub mod text;
pub mod units;
pub mod vm;
