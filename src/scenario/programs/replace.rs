//! `atomic-replace`: the idiom programs use to replace a file whole —
//! write a temporary file, sync it, rename it over the old, sync the
//! folder — and its three weaker forms, done by coreutils (`sync FILE`,
//! `mv`): what each sync costs beside what a crash leaves when it is
//! skipped, each state judged by reading the file back
//! (`replace_check.sh`).

use super::{Program, Vars};
use crate::scenario::params::{ParamKind, ParamSpec, Params};

const PARAMS: [ParamSpec; 3] = [
    ParamSpec {
        name: "replaces",
        kind: ParamKind::Count { max: 10_000 },
        small: "5",
        full: "20",
        seed: "-",
        about: "times the file is replaced by its next version",
    },
    ParamSpec {
        name: "form",
        kind: ParamKind::Choice(&["full", "no-dir-sync", "no-file-sync", "none"]),
        small: "full",
        full: "full",
        seed: "-",
        about: "full: sync the new file, rename, sync the folder; or without one sync or both",
    },
    ParamSpec { name: "size", kind: ParamKind::Size, small: "64K", full: "64K", seed: "-", about: "each version's size" },
];

/// The scenario.
pub static ATOMIC_REPLACE: Program = Program {
    name: "atomic-replace",
    about: "write a temporary file, sync, rename, sync the folder, and its weaker forms; cost beside crash safety",
    params: &PARAMS,
    scripts: super::scripts!("replace"),
    vars,
};

/// A case's variables and the bytes it needs.
fn vars(params: &Params) -> Vars {
    let size = params.number("size");
    // The file and its next version side by side, with room.
    let space = (1 << 20) + size * 3;
    let vars = vec![
        ("REPLACES", params.number("replaces").to_string()),
        ("FORM", params.word("form").to_string()),
        ("SIZE", size.to_string()),
    ];
    (vars, space)
}
